package engine

import (
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// retryJitter returns the retry jitter of each task that has one (its own,
// Task.RetryJitter, else the node's); nil when none has, so that the
// completions of a node without jitter look nothing up.
func retryJitter(node float64, tasks map[string]ratchet.Definition) map[string]float64 {
	var out map[string]float64
	for name, def := range tasks {
		f := node
		if j, ok := def.(interface{ Jitter() (float64, bool) }); ok {
			if own, set := j.Jitter(); set {
				f = own
			}
		}
		if f > 0 {
			if out == nil {
				out = map[string]float64{}
			}
			out[name] = f
		}
	}
	return out
}
