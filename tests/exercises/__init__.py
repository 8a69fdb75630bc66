"""Tests of the exercise checkers of posenc.exercises, one file per chapter module."""
