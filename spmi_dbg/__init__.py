"""spmi-dbg: find, explain and reproduce SuperPMI crashes."""

__version__ = "0.1.0"
