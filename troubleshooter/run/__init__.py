"""Running probes and collecting evidence: node runner, local world, rank worker, sessions."""
