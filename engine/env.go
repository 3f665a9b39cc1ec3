package engine

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/sdk/cronexpr"
)

// envSetting is one RATCHET_* variable that LookupEnv recognises. A setting
// with an apply function is implemented: its value is parsed (an integer at
// least min, or for text settings a non-empty string) and applied. One
// without is a name of the spec that this version does not implement yet,
// or that has no meaning in Go: it is accepted and reported as a warning.
type envSetting struct {
	name     string
	doc      string
	min      int64
	apply    func(o *Options, v int64)
	applyStr func(o *Options, v string) error
	// ignored says why a setting without apply is accepted and ignored.
	ignored string
	// elsewhere names what reads a setting that is not the engine's
	// (encryption.EnvKeys): LookupEnv accepts it, silently.
	elsewhere string
}

const (
	notYet      = "not implemented in this version; ignored"
	notInGo     = "a Java threading setting with no meaning in Go (jobs run on goroutines, bounded by RATCHET_WORKER_CONCURRENCY); ignored"
	notInGoJNDI = "a Jakarta EE setting with no meaning in Go; ignored"
)

// envSettings is the table of every RATCHET_* name LookupEnv recognises:
// the spec's names (implemented or not) and this library's own. A setting
// added by a later feature goes here.
var envSettings = []envSetting{
	// Node settings of the spec.
	{name: "RATCHET_NODE_ID", doc: "node id", applyStr: func(o *Options, v string) error { o.NodeID = v; return nil }},
	{name: "RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS", doc: "heartbeat interval (s)", min: 1,
		apply: func(o *Options, v int64) { o.HeartbeatInterval = time.Duration(v) * time.Second }},
	{name: "RATCHET_NODE_ORPHAN_GRACE_SECONDS", doc: "orphan grace period (s)", min: 1,
		apply: func(o *Options, v int64) { o.OrphanGrace = time.Duration(v) * time.Second }},
	{name: "RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS", doc: "orphan scan interval (s)", min: 1,
		apply: func(o *Options, v int64) { o.OrphanScanInterval = time.Duration(v) * time.Second }},
	{name: "RATCHET_NODE_MAX_CRASH_REDELIVERIES", doc: "crash budget; 0 fails on the first crash", min: 0,
		apply: func(o *Options, v int64) {
			o.MaxCrashRedeliveries = int(v)
			if v == 0 {
				o.MaxCrashRedeliveries = FailOnFirstCrash
			}
		}},
	// RatchetOptions.store(s -> s.priorityBoostIntervalMinutes(n)).
	{name: "RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES", doc: "aging interval (min); 0 disables aging", min: 0,
		apply: func(o *Options, v int64) {
			o.PriorityBoostInterval = time.Duration(v) * time.Minute
			if v == 0 {
				o.PriorityBoostInterval = AgingDisabled
			}
		}},
	// RatchetOptions.payload(p -> p.maxPayloadKb(n)).
	{name: "RATCHET_PAYLOAD_MAX_PAYLOAD_KB", doc: "payload limit (KiB)", min: 1,
		apply: func(o *Options, v int64) { o.Client.MaxPayloadBytes = int(v) * 1024 }},
	// This library's worker settings.
	{name: "RATCHET_WORKER_CONCURRENCY", doc: "jobs run at once", min: 1,
		apply: func(o *Options, v int64) { o.Concurrency = int(v) }},
	{name: "RATCHET_WORKER_CLAIM_CONCURRENCY", doc: "claims a node may have at the store at once (default 2 when the concurrency is at least twice the claim batch, else 1)", min: 1,
		apply: func(o *Options, v int64) { o.ClaimConcurrency = int(v) }},
	{name: "RATCHET_WORKER_POLL_INTERVAL_MS", doc: "longest delay between polls (ms)", min: 1,
		apply: func(o *Options, v int64) { o.PollInterval = time.Duration(v) * time.Millisecond }},
	{name: "RATCHET_WORKER_SHUTDOWN_TIMEOUT_SECONDS", doc: "drain timeout of Stop (s)", min: 1,
		apply: func(o *Options, v int64) { o.ShutdownTimeout = time.Duration(v) * time.Second }},
	{name: "RATCHET_WORKER_RUN_TIMEOUT_MS", doc: "run timeout of a job that names none (ms); 0 for none", min: 0,
		apply: func(o *Options, v int64) { o.RunTimeout = time.Duration(v) * time.Millisecond }},
	{name: "RATCHET_WORKER_TASK_LIMITS", doc: "jobs of a task run at once on a node (task=n, comma-separated)", applyStr: func(o *Options, v string) error {
		limits := TaskLimits{}
		for _, kv := range strings.Split(v, ",") {
			task, n, ok := strings.Cut(strings.TrimSpace(kv), "=")
			limit, err := strconv.Atoi(strings.TrimSpace(n))
			if !ok || task == "" || err != nil || limit < 1 {
				return fmt.Errorf("%q is not task=n with n at least 1", kv)
			}
			limits[strings.TrimSpace(task)] = limit
		}
		o.TaskTuning = limits
		return nil
	}},
	{name: "RATCHET_RETRY_JITTER", doc: "spread of retry delays: each drawn from [delay·(1−f), delay] (a fraction f in [0, 1]; 0, the default, keeps them exact)", applyStr: func(o *Options, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("%q is not a fraction in [0, 1]", v)
		}
		o.RetryJitter = f
		return nil
	}},
	// This library's circuit breakers (the defaults of every service).
	{name: "RATCHET_CIRCUIT_BREAKER_ENABLED", doc: "circuit breakers of protected tasks (true or false)", applyStr: func(o *Options, v string) error {
		on, err := strconv.ParseBool(v)
		o.Breakers.Disabled = !on
		return err
	}},
	{name: "RATCHET_CIRCUIT_BREAKER_FAILURE_RATE_THRESHOLD", doc: "failure rate that opens a breaker (percent, 1 to 100)", min: 1,
		apply: func(o *Options, v int64) { o.Breakers.Config.FailureRateThreshold = float64(min(v, 100)) }},
	{name: "RATCHET_CIRCUIT_BREAKER_SLIDING_WINDOW_SIZE", doc: "calls a breaker's failure rate is taken over", min: 1,
		apply: func(o *Options, v int64) { o.Breakers.Config.SlidingWindowSize = int(v) }},
	{name: "RATCHET_CIRCUIT_BREAKER_MINIMUM_CALLS", doc: "calls counted before a breaker may open", min: 1,
		apply: func(o *Options, v int64) { o.Breakers.Config.MinimumCalls = int(v) }},
	{name: "RATCHET_CIRCUIT_BREAKER_PERMITTED_CALLS_IN_HALF_OPEN", doc: "trial calls of a half-open breaker", min: 1,
		apply: func(o *Options, v int64) { o.Breakers.Config.PermittedCallsInHalfOpen = int(v) }},
	{name: "RATCHET_CIRCUIT_BREAKER_WAIT_DURATION_SECONDS", doc: "how long a breaker stays open (s)", min: 1,
		apply: func(o *Options, v int64) { o.Breakers.Config.WaitDuration = time.Duration(v) * time.Second }},
	{name: "RATCHET_CIRCUIT_BREAKER_RETRY_DELAY_SECONDS", doc: "delay before a job refused by an open breaker runs again (s)", min: 1,
		apply: func(o *Options, v int64) { o.Breakers.RetryDelay = time.Duration(v) * time.Second }},
	// Archiving, retention and masking of the spec.
	{name: "RATCHET_JOB_ARCHIVE_ENABLED", doc: "archive finished jobs (true or false)", applyStr: func(o *Options, v string) error {
		on, err := strconv.ParseBool(v)
		o.Archive.Disabled = !on
		return err
	}},
	{name: "RATCHET_JOB_RETENTION_DAYS", doc: "days before finished jobs are archived", min: 1,
		apply: func(o *Options, v int64) { o.Archive.Retention = time.Duration(v) * 24 * time.Hour }},
	{name: "RATCHET_JOB_ARCHIVE_RETENTION_DAYS", doc: "days after they finished before archived jobs are deleted for good (unset keeps them forever)", min: 1,
		apply: func(o *Options, v int64) { o.Archive.PurgeAfter = time.Duration(v) * 24 * time.Hour }},
	{name: "RATCHET_JOB_ARCHIVE_CRON", doc: "when the archiver runs (a cron expression, UTC)", applyStr: func(o *Options, v string) error {
		_, err := cronexpr.Parse(v, "")
		o.Archive.Cron = v
		return err
	}},
	{name: "RATCHET_JOB_ARCHIVE_BATCH_SIZE", doc: "jobs archived per run", min: 1,
		apply: func(o *Options, v int64) { o.Archive.BatchSize = int(v) }},
	// Workflows.
	{name: "RATCHET_WORKFLOW_REPAIR_INTERVAL_SECONDS", doc: "time between passes of the workflow repair service (s)", min: 1,
		apply: func(o *Options, v int64) { o.WorkflowRepairInterval = time.Duration(v) * time.Second }},
	// Signals.
	{name: "RATCHET_SIGNAL_SWEEP_INTERVAL_MS", doc: "time between passes of the signal sweeper, which times out signal waits (ms)", min: 1,
		apply: func(o *Options, v int64) { o.SignalSweepInterval = time.Duration(v) * time.Millisecond }},
	// Start-by deadlines.
	{name: "RATCHET_START_BY_SWEEP_INTERVAL_MS", doc: "time between passes of the start-by sweeper, which fails the jobs no node started by their deadline (ms)", min: 1,
		apply: func(o *Options, v int64) { o.StartBySweepInterval = time.Duration(v) * time.Millisecond }},
	// Batches.
	{name: "RATCHET_BATCH_FINISH_INTERVAL_MS", doc: "time between passes of the batch finisher, which ends finished batches and submits their callbacks (ms)", min: 1,
		apply: func(o *Options, v int64) { o.BatchFinishInterval = time.Duration(v) * time.Millisecond }},
	{name: "RATCHET_LOG_RETENTION_DAYS", doc: "days job log lines are kept", min: 1,
		apply: func(o *Options, v int64) { o.JobLogs.Retention = time.Duration(v) * 24 * time.Hour }},
	// This library's job log settings.
	{name: "RATCHET_JOB_LOG_LEVEL", doc: "lowest level of the job logs kept: debug, info, warn, error or off", applyStr: func(o *Options, v string) error {
		if strings.EqualFold(v, "off") {
			o.JobLogs.Disabled = true
			return nil
		}
		var l slog.Level
		if err := l.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("want debug, info, warn, error or off: %w", err)
		}
		o.JobLogs.Disabled, o.JobLogs.Level = false, l
		return nil
	}},
	{name: "RATCHET_JOB_LOG_MAX_LINES", doc: "most job log lines a job keeps", min: 1,
		apply: func(o *Options, v int64) { o.JobLogs.MaxLines = int(v) }},
	// Payload encryption: read by package encryption (its module), not
	// by the engine; listed so that they are known.
	{name: "RATCHET_ENCRYPTION_KEYS", doc: "the encryption keys, id:base64,id:base64", elsewhere: "encryption.EnvKeys"},
	{name: "RATCHET_ENCRYPTION_CURRENT_KEY", doc: "the id of the key new values are sealed under (default: the last listed)", elsewhere: "encryption.EnvKeys"},
	// The dashboard's credentials: read by the ratchet command's dashboard
	// and dev (module tools), not by the engine.
	{name: "RATCHET_DASHBOARD_TOKEN", doc: "the dashboard's operator token (ratchet dashboard, ratchet dev)", elsewhere: "ratchet dashboard"},
	{name: "RATCHET_DASHBOARD_VIEWER_TOKEN", doc: "the dashboard's read-only token (ratchet dashboard)", elsewhere: "ratchet dashboard"},
	// The ratchet command's store (module tools): --store and --schema
	// when the command line does not give them.
	{name: "RATCHET_STORE", doc: "the ratchet command's --store (a DSN or URL) when the line has none", elsewhere: "ratchet (the command)"},
	{name: "RATCHET_SCHEMA", doc: "the ratchet command's --schema when the line has none", elsewhere: "ratchet (the command)"},
	{name: "RATCHET_MASK_PAYLOADS", doc: "mask sensitive fields in job details (true or false)", applyStr: func(o *Options, v string) error {
		on, err := strconv.ParseBool(v)
		o.Client.MaskPayloads = on
		return err
	}},
	// Virtual-thread settings of the Java library.
	{name: "RATCHET_WORKER_DEFAULT_THREADING_MODE", doc: "platform or virtual threads", ignored: notInGo},
	{name: "RATCHET_WORKER_VIRTUAL_COUNTER_ACCOUNTING", doc: "counter-based backpressure", ignored: notInGo},
	{name: "RATCHET_VIRTUAL_THREAD_LIMIT_SINGLE", doc: "virtual-thread limit of single jobs", ignored: notInGo},
	{name: "RATCHET_VIRTUAL_THREAD_LIMIT_BATCH_CHILD", doc: "virtual-thread limit of batch children", ignored: notInGo},
	{name: "RATCHET_WORKER_JOB_EXECUTOR_JNDI", doc: "managed executor JNDI name", ignored: notInGoJNDI},
}

// envPrefixesIgnored are RATCHET_* variables that are not engine settings.
var envPrefixesIgnored = []string{"RATCHET_TEST_"}

// EnvWarning is a RATCHET_* variable that LookupEnv accepted without
// applying it: a name it does not know (a typo, or a setting of a newer
// version), or a name of the spec that this version does not implement.
type EnvWarning struct {
	// Name is the variable's name.
	Name string
	// Problem says why it was not applied.
	Problem string
}

// String renders the warning as one line.
func (w EnvWarning) String() string { return w.Name + ": " + w.Problem }

// FromEnv returns base overlaid with the RATCHET_* environment variables of
// this process (see LookupEnv) and logs each warning at WARN level on
// base.Client.Logger (slog.Default() when nil).
func FromEnv(base Options) (Options, error) {
	o, warnings, err := LookupEnv(base, os.Environ())
	if err != nil {
		return base, err
	}
	log := base.Client.Logger
	if log == nil {
		log = slog.Default()
	}
	for _, w := range warnings {
		log.Warn("ratchet: setting not applied", "variable", w.Name, "problem", w.Problem)
	}
	return o, nil
}

// LookupEnv returns base overlaid with the RATCHET_* settings found in
// environ (KEY=VALUE strings), and warnings for the variables it accepted
// without applying.
//
// Applied: RATCHET_NODE_ID, RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS,
// RATCHET_NODE_ORPHAN_GRACE_SECONDS, RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS,
// RATCHET_NODE_MAX_CRASH_REDELIVERIES (0 is FailOnFirstCrash),
// RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES (0 is AgingDisabled),
// RATCHET_PAYLOAD_MAX_PAYLOAD_KB, RATCHET_WORKER_CONCURRENCY,
// RATCHET_WORKER_POLL_INTERVAL_MS, RATCHET_WORKER_SHUTDOWN_TIMEOUT_SECONDS,
// RATCHET_WORKER_RUN_TIMEOUT_MS (Options.RunTimeout),
// RATCHET_WORKER_TASK_LIMITS (task=n,task=n: Options.TaskTuning),
// the archive's RATCHET_JOB_ARCHIVE_ENABLED (true or false),
// RATCHET_JOB_RETENTION_DAYS, RATCHET_JOB_ARCHIVE_RETENTION_DAYS,
// RATCHET_JOB_ARCHIVE_CRON (checked by package cron) and
// RATCHET_JOB_ARCHIVE_BATCH_SIZE, and the job logs'
// RATCHET_LOG_RETENTION_DAYS, RATCHET_JOB_LOG_LEVEL (debug, info, warn,
// error or off) and RATCHET_JOB_LOG_MAX_LINES, and the circuit breakers'
// RATCHET_CIRCUIT_BREAKER_ENABLED, _FAILURE_RATE_THRESHOLD (percent),
// _SLIDING_WINDOW_SIZE, _MINIMUM_CALLS, _PERMITTED_CALLS_IN_HALF_OPEN,
// _WAIT_DURATION_SECONDS and _RETRY_DELAY_SECONDS,
// RATCHET_WORKFLOW_REPAIR_INTERVAL_SECONDS, RATCHET_SIGNAL_SWEEP_INTERVAL_MS,
// RATCHET_BATCH_FINISH_INTERVAL_MS and RATCHET_MASK_PAYLOADS (true or
// false). A malformed or out-of-range value of one of these is an error
// naming the variable, and nothing is applied.
//
// Accepted silently, being another package's: RATCHET_ENCRYPTION_KEYS and
// RATCHET_ENCRYPTION_CURRENT_KEY (encryption.EnvKeys), and the dashboard's
// RATCHET_DASHBOARD_TOKEN and RATCHET_DASHBOARD_VIEWER_TOKEN (the ratchet
// command's dashboard and dev), and the ratchet command's RATCHET_STORE and
// RATCHET_SCHEMA.
//
// Warned about, never an error, so that one stray variable cannot stop a
// node from starting: the spec's names this version does not implement
// (the Java threading settings) and RATCHET_* names it does not know.
// RATCHET_TEST_* variables are left to the tests.
func LookupEnv(base Options, environ []string) (Options, []EnvWarning, error) {
	known := make(map[string]envSetting, len(envSettings))
	for _, s := range envSettings {
		known[s.name] = s
	}
	o := base
	var warnings []EnvWarning
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "RATCHET_") || ignoredEnv(name) {
			continue
		}
		s, ok := known[name]
		switch {
		case !ok:
			warnings = append(warnings, EnvWarning{Name: name, Problem: "unknown setting (a typo, or a setting of another version); ignored"})
			continue
		case s.elsewhere != "":
			continue
		case s.applyStr != nil:
			v := strings.TrimSpace(val)
			if v == "" {
				return base, nil, fmt.Errorf("ratchet: %s is empty (%s)", name, s.doc)
			}
			if err := s.applyStr(&o, v); err != nil {
				return base, nil, fmt.Errorf("ratchet: %s=%q: %w (%s)", name, val, err, s.doc)
			}
			continue
		case s.apply == nil:
			warnings = append(warnings, EnvWarning{Name: name, Problem: s.doc + ": " + s.ignored})
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return base, nil, fmt.Errorf("ratchet: %s=%q is not an integer (%s)", name, val, s.doc)
		}
		if v < s.min {
			return base, nil, fmt.Errorf("ratchet: %s=%d is below its minimum %d (%s)", name, v, s.min, s.doc)
		}
		s.apply(&o, v)
	}
	sort.Slice(warnings, func(i, j int) bool { return warnings[i].Name < warnings[j].Name })
	return o, warnings, nil
}

// EnvSettingNames returns every RATCHET_* name LookupEnv recognises,
// implemented or not, in the order of its table.
func EnvSettingNames() []string {
	names := make([]string, len(envSettings))
	for i, s := range envSettings {
		names[i] = s.name
	}
	return names
}

func ignoredEnv(name string) bool {
	for _, p := range envPrefixesIgnored {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
