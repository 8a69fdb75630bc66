"""Tests of posenc.analysis, one file per module."""
