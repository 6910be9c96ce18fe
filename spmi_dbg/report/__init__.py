"""Reports: Markdown, JSON and bundles written from a Diagnosis."""
