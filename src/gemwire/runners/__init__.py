"""Layer 4: the public async API that composes transport, protocol and normalizer."""
