"""Stand-in ``torchair.ge.attr``: typed attr wrappers (``ge.attr.Int(3)``, ``ge.attr.ListInt([1, 2])``, ...)."""

from __future__ import annotations

from fxlab.compat.ge_api import ATTR_BUILDERS

Int = ATTR_BUILDERS["Int"]
Float = ATTR_BUILDERS["Float"]
Bool = ATTR_BUILDERS["Bool"]
Str = ATTR_BUILDERS["Str"]
DataType = ATTR_BUILDERS["DataType"]
ListInt = ATTR_BUILDERS["ListInt"]
ListFloat = ATTR_BUILDERS["ListFloat"]
ListBool = ATTR_BUILDERS["ListBool"]
ListStr = ATTR_BUILDERS["ListStr"]
ListDataType = ATTR_BUILDERS["ListDataType"]
ListListInt = ATTR_BUILDERS["ListListInt"]
ListListFloat = ATTR_BUILDERS["ListListFloat"]
