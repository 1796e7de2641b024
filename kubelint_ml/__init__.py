"""kubelint-ml: a static policy linter for Kubernetes ML training manifests."""

__version__ = "0.1.0"
