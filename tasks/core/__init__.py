"""Shared plumbing for every paper: params, seeding, devices, I/O, claims, plots, tracking."""
