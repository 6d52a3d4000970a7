"""Stand-in ``torchair.configs``."""
