"""Pure domain: fragments, candidates, facts, scores and the policy. No I/O, no Qt."""
