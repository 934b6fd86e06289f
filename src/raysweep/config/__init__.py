"""sweep.json: models, parameter DSL and loading. Knows nothing of Ray."""
