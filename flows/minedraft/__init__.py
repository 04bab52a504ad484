"""MineDraft: batch-parallel speculative decoding (ICML 2026), stages in pipeline.py."""
