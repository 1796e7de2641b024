"""Policies teams already have, run beside the ML rules: Rego (conftest) and Gatekeeper ConstraintTemplates."""
