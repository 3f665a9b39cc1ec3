package engine

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// envSetting is one RATCHET_* variable that FromEnv reads.
type envSetting struct {
	name  string
	doc   string
	apply func(o *Options, v int64)
	min   int64
}

// envSettings lists every variable FromEnv understands. The names of the
// spec are kept; integers only.
var envSettings = []envSetting{
	{"RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS", "heartbeat interval (s)", func(o *Options, v int64) { o.HeartbeatInterval = time.Duration(v) * time.Second }, 1},
	{"RATCHET_NODE_ORPHAN_GRACE_SECONDS", "orphan grace period (s)", func(o *Options, v int64) { o.OrphanGrace = time.Duration(v) * time.Second }, 1},
	{"RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS", "orphan scan interval (s)", func(o *Options, v int64) { o.OrphanScanInterval = time.Duration(v) * time.Second }, 1},
	{"RATCHET_NODE_MAX_CRASH_REDELIVERIES", "crash budget; 0 fails on the first crash", func(o *Options, v int64) {
		o.MaxCrashRedeliveries = int(v)
		if v == 0 {
			o.MaxCrashRedeliveries = -1
		}
	}, 0},
	{"RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES", "aging interval (min); 0 disables aging", func(o *Options, v int64) {
		o.PriorityBoostInterval = time.Duration(v) * time.Minute
		if v == 0 {
			o.PriorityBoostInterval = -1
		}
	}, 0},
	{"RATCHET_PAYLOAD_MAX_PAYLOAD_KB", "payload limit (KiB)", func(o *Options, v int64) { o.MaxPayloadBytes = int(v) * 1024 }, 1},
	{"RATCHET_WORKER_CONCURRENCY", "jobs run at once", func(o *Options, v int64) { o.Concurrency = int(v) }, 1},
	{"RATCHET_WORKER_POLL_INTERVAL_MS", "longest delay between polls (ms)", func(o *Options, v int64) { o.PollInterval = time.Duration(v) * time.Millisecond }, 1},
	{"RATCHET_WORKER_SHUTDOWN_TIMEOUT_SECONDS", "drain timeout of Stop (s)", func(o *Options, v int64) { o.ShutdownTimeout = time.Duration(v) * time.Second }, 1},
}

// envPrefixesIgnored are RATCHET_* variables that are not engine settings.
var envPrefixesIgnored = []string{"RATCHET_TEST_"}

// FromEnv returns base overlaid with the RATCHET_* environment variables of
// this process. See LookupEnv.
func FromEnv(base Options) (Options, error) {
	return LookupEnv(base, os.Environ())
}

// LookupEnv returns base overlaid with the RATCHET_* settings found in
// environ (KEY=VALUE strings): the node settings of the spec
// (RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS, _ORPHAN_GRACE_SECONDS,
// _ORPHAN_SCAN_INTERVAL_SECONDS, _MAX_CRASH_REDELIVERIES, RATCHET_NODE_ID),
// RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES (0 disables aging),
// RATCHET_PAYLOAD_MAX_PAYLOAD_KB, RATCHET_WORKER_CONCURRENCY,
// RATCHET_WORKER_POLL_INTERVAL_MS and RATCHET_WORKER_SHUTDOWN_TIMEOUT_SECONDS.
// A malformed or out-of-range value, or a RATCHET_* variable this version
// does not know, is an error naming the variable (RATCHET_TEST_* variables
// are left to the tests).
func LookupEnv(base Options, environ []string) (Options, error) {
	known := map[string]envSetting{}
	for _, s := range envSettings {
		known[s.name] = s
	}
	o := base
	var unknown []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "RATCHET_") || ignoredEnv(name) {
			continue
		}
		if name == "RATCHET_NODE_ID" {
			if strings.TrimSpace(val) == "" {
				return base, fmt.Errorf("ratchet: RATCHET_NODE_ID is empty")
			}
			o.NodeID = strings.TrimSpace(val)
			continue
		}
		s, ok := known[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return base, fmt.Errorf("ratchet: %s=%q is not an integer (%s)", name, val, s.doc)
		}
		if v < s.min {
			return base, fmt.Errorf("ratchet: %s=%d is below its minimum %d (%s)", name, v, s.min, s.doc)
		}
		s.apply(&o, v)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return base, fmt.Errorf("ratchet: unknown setting %s (not supported by this version)", strings.Join(unknown, ", "))
	}
	return o, nil
}

func ignoredEnv(name string) bool {
	for _, p := range envPrefixesIgnored {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
