package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
)

func TestLookupEnv(t *testing.T) {
	o, err := engine.LookupEnv(engine.Options{Concurrency: 7}, []string{
		"PATH=/usr/bin",
		"RATCHET_NODE_ID=worker-1",
		"RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS=5",
		"RATCHET_NODE_ORPHAN_GRACE_SECONDS=30",
		"RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS=60",
		"RATCHET_NODE_MAX_CRASH_REDELIVERIES=0",
		"RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES=0",
		"RATCHET_PAYLOAD_MAX_PAYLOAD_KB=256",
		"RATCHET_TEST_POSTGRES_DSN=postgres://x",
	})
	require.NoError(t, err)
	assert.Equal(t, "worker-1", o.NodeID)
	assert.Equal(t, 7, o.Concurrency, "unset variables keep the base value")
	assert.Equal(t, 5*time.Second, o.HeartbeatInterval)
	assert.Equal(t, 30*time.Second, o.OrphanGrace)
	assert.Equal(t, time.Minute, o.OrphanScanInterval)
	assert.Negative(t, o.MaxCrashRedeliveries, "0 in the environment means no redeliveries")
	assert.Negative(t, o.PriorityBoostInterval, "0 in the environment disables aging")
	assert.Equal(t, 256*1024, o.MaxPayloadBytes)

	o, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_NODE_MAX_CRASH_REDELIVERIES=5", "RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES=30"})
	require.NoError(t, err)
	assert.Equal(t, 5, o.MaxCrashRedeliveries)
	assert.Equal(t, 30*time.Minute, o.PriorityBoostInterval)
}

func TestLookupEnvErrorsNameTheVariable(t *testing.T) {
	for env, want := range map[string]string{
		"RATCHET_NODE_ORPHAN_GRACE_SECONDS=soon":    "RATCHET_NODE_ORPHAN_GRACE_SECONDS=\"soon\" is not an integer",
		"RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS=0": "RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS=0 is below its minimum 1",
		"RATCHET_NODE_MAX_CRASH_REDELIVERIES=-2":    "RATCHET_NODE_MAX_CRASH_REDELIVERIES=-2 is below its minimum 0",
		"RATCHET_NODE_HEARTBEAT_INTERVAL=10":        "unknown setting RATCHET_NODE_HEARTBEAT_INTERVAL",
		"RATCHET_NODE_ID=  ":                        "RATCHET_NODE_ID is empty",
	} {
		base := engine.Options{Concurrency: 3}
		o, err := engine.LookupEnv(base, []string{env})
		assert.ErrorContains(t, err, want, env)
		assert.Equal(t, base, o, "nothing applied on error")
	}
}
