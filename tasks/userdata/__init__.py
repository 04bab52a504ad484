"""Readers of users' numeric files at the entry points, with the rules of tasks.core.inputs (one-line InputError,
sizes checked before allocating, non-finite values refused)."""
