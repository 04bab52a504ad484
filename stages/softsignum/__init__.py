"""SoftSignum / SoftMuon pipeline: stages live in dvc.yaml, flows in flows/softsignum.py."""
