"""Running probes and collecting evidence: options, plan, node runner, local world, rank worker, job file, session, world info, progress events."""
