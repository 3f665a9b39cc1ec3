package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine's stop runs every step of nodecore.StopOrder, in its order.
func TestStopRunsEveryStepInOrder(t *testing.T) {
	e := &Engine{}
	var names []string
	for _, s := range e.stopOrder() {
		require.NotNil(t, s.run, s.name)
		names = append(names, s.name)
	}
	assert.Equal(t, []string{"stop claiming", "drain and release", "flush completions", "stop heartbeats", "deregister"}, names)
}
