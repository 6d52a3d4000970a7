"""Comparisons: one FX stage against another, one saved trace against another, one
Ascend IR against another (paired by provenance). Data in, data out; viz renders them."""
