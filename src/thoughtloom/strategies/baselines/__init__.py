"""Baselines every method is measured against."""
