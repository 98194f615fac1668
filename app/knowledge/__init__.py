"""Knowledge mined from JAX's own source: error sites, their releases, lowering rules."""
