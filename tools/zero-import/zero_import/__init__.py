"""zero-import: PyTorch (torch.export) and Hugging Face models into Zero's
train dialect. See docs/import.md; the command line is __main__.py."""
