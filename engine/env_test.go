package engine_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

func TestLookupEnv(t *testing.T) {
	o, warnings, err := engine.LookupEnv(engine.Options{Concurrency: 7}, []string{
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
	assert.Empty(t, warnings)
	assert.Equal(t, "worker-1", o.NodeID)
	assert.Equal(t, 7, o.Concurrency, "unset variables keep the base value")
	assert.Equal(t, 5*time.Second, o.HeartbeatInterval)
	assert.Equal(t, 30*time.Second, o.OrphanGrace)
	assert.Equal(t, time.Minute, o.OrphanScanInterval)
	assert.Equal(t, engine.FailOnFirstCrash, o.MaxCrashRedeliveries, "0 in the environment is the spec's budget of none")
	assert.Equal(t, engine.AgingDisabled, o.PriorityBoostInterval, "0 in the environment disables aging, as in the spec")
	assert.Equal(t, 256*1024, o.Client.MaxPayloadBytes)

	o, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_NODE_MAX_CRASH_REDELIVERIES=5", "RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES=30",
		"RATCHET_WORKFLOW_REPAIR_INTERVAL_SECONDS=20", "RATCHET_SIGNAL_SWEEP_INTERVAL_MS=250", "RATCHET_START_BY_SWEEP_INTERVAL_MS=300",
		"RATCHET_BATCH_FINISH_INTERVAL_MS=40"})
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, o.WorkflowRepairInterval)
	assert.Equal(t, 250*time.Millisecond, o.SignalSweepInterval)
	assert.Equal(t, 300*time.Millisecond, o.StartBySweepInterval)
	assert.Equal(t, 40*time.Millisecond, o.BatchFinishInterval)
	assert.Equal(t, 5, o.MaxCrashRedeliveries)
	assert.Equal(t, 30*time.Minute, o.PriorityBoostInterval)
}

func TestLookupEnvErrorsNameTheVariable(t *testing.T) {
	for env, want := range map[string]string{
		"RATCHET_NODE_ORPHAN_GRACE_SECONDS=soon":    "RATCHET_NODE_ORPHAN_GRACE_SECONDS=\"soon\" is not an integer",
		"RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS=0": "RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS=0 is below its minimum 1",
		"RATCHET_NODE_MAX_CRASH_REDELIVERIES=-2":    "RATCHET_NODE_MAX_CRASH_REDELIVERIES=-2 is below its minimum 0",
		"RATCHET_PAYLOAD_MAX_PAYLOAD_KB=1.5":        "RATCHET_PAYLOAD_MAX_PAYLOAD_KB=\"1.5\" is not an integer",
		"RATCHET_WORKER_CONCURRENCY=0":              "RATCHET_WORKER_CONCURRENCY=0 is below its minimum 1",
		"RATCHET_NODE_ID=  ":                        "RATCHET_NODE_ID is empty",
	} {
		base := engine.Options{Concurrency: 3}
		o, _, err := engine.LookupEnv(base, []string{env})
		assert.ErrorContains(t, err, want, env)
		assert.Equal(t, base, o, "nothing applied on error")
	}
}

// specNames are the RATCHET_* variables named in the spec's FAQ and SPI
// reference, and the environment forms of its builder settings
// (priorityBoostIntervalMinutes, maxPayloadKb).
var specNames = []string{
	"RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS", "RATCHET_NODE_ORPHAN_GRACE_SECONDS",
	"RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS", "RATCHET_NODE_MAX_CRASH_REDELIVERIES",
	"RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES", "RATCHET_PAYLOAD_MAX_PAYLOAD_KB",
	"RATCHET_JOB_ARCHIVE_ENABLED", "RATCHET_JOB_RETENTION_DAYS", "RATCHET_JOB_ARCHIVE_CRON",
	"RATCHET_JOB_ARCHIVE_BATCH_SIZE", "RATCHET_LOG_RETENTION_DAYS", "RATCHET_MASK_PAYLOADS",
	"RATCHET_WORKER_DEFAULT_THREADING_MODE", "RATCHET_WORKER_JOB_EXECUTOR_JNDI",
	"RATCHET_WORKER_VIRTUAL_COUNTER_ACCOUNTING", "RATCHET_VIRTUAL_THREAD_LIMIT_SINGLE",
	"RATCHET_VIRTUAL_THREAD_LIMIT_BATCH_CHILD",
}

// Every name of the spec is recognised: none stops a node from starting,
// the implemented ones apply, the others come back as warnings naming
// them; a name nobody knows is a warning too.
func TestLookupEnvRecognisesEverySpecName(t *testing.T) {
	names := engine.EnvSettingNames()
	for _, n := range specNames {
		assert.Contains(t, names, n)
	}
	env := []string{"RATCHET_JOB_ARCHIVE_ENABLED=true", "RATCHET_JOB_RETENTION_DAYS=90", "RATCHET_JOB_ARCHIVE_CRON=0 0 1 * * ?",
		"RATCHET_JOB_ARCHIVE_BATCH_SIZE=1000", "RATCHET_LOG_RETENTION_DAYS=30", "RATCHET_MASK_PAYLOADS=true",
		"RATCHET_WORKER_DEFAULT_THREADING_MODE=virtual", "RATCHET_WORKER_JOB_EXECUTOR_JNDI=java:app/concurrent/MyVirtualExecutor",
		"RATCHET_WORKER_VIRTUAL_COUNTER_ACCOUNTING=true", "RATCHET_VIRTUAL_THREAD_LIMIT_SINGLE=500",
		"RATCHET_VIRTUAL_THREAD_LIMIT_BATCH_CHILD=2000", "RATCHET_NODE_HEARTBEAT_INTERVAL=10",
		"RATCHET_WORKER_CONCURRENCY=8"}
	base := engine.Options{Concurrency: 3}
	o, warnings, err := engine.LookupEnv(base, env)
	require.NoError(t, err, "no stray variable stops a node")
	assert.Equal(t, 8, o.Concurrency, "implemented settings still apply beside the warnings")
	got := map[string]string{}
	for _, w := range warnings {
		got[w.Name] = w.Problem
	}
	assert.Len(t, got, len(env)-7, "one warning per variable not applied (the four archive settings, the log retention, masking and the concurrency apply)")
	assert.Contains(t, got["RATCHET_NODE_HEARTBEAT_INTERVAL"], "unknown setting")
	assert.Equal(t, engine.ArchiveOptions{Retention: 90 * 24 * time.Hour, Cron: "0 0 1 * * ?", BatchSize: 1000}, o.Archive, "the archive settings apply")
	assert.Equal(t, 30*24*time.Hour, o.JobLogs.Retention, "the log retention applies")
	assert.Contains(t, got["RATCHET_WORKER_DEFAULT_THREADING_MODE"], "no meaning in Go")
	assert.True(t, o.Client.MaskPayloads, "RATCHET_MASK_PAYLOADS applies")
	assert.NotContains(t, got, "RATCHET_MASK_PAYLOADS")
}

// The spec itself, where it sits beside this repository (CI lays it
// there): every RATCHET_* name it mentions is in the table.
func TestLookupEnvCoversTheSpecFiles(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "spec")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Skipf("the spec is not at %s (it sits beside the repository in development and CI)", dir)
	}
	re := regexp.MustCompile(`RATCHET_[A-Z0-9_]*[A-Z0-9]`)
	names := engine.EnvSettingNames()
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, n := range re.FindAllString(string(b), -1) {
			found++
			assert.Contains(t, names, n, "named in %s", filepath.Base(f))
		}
	}
	assert.NotZero(t, found)
}

// FromEnv logs each warning and still returns the options.
func TestFromEnvLogsWarnings(t *testing.T) {
	t.Setenv("RATCHET_WORKER_DEFAULT_THREADING_MODE", "virtual")
	t.Setenv("RATCHET_NO_SUCH_SETTING", "1")
	var logs strings.Builder
	o, err := engine.FromEnv(engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	require.NoError(t, err)
	assert.NotNil(t, o.Client.Logger)
	assert.Contains(t, logs.String(), "variable=RATCHET_WORKER_DEFAULT_THREADING_MODE")
	assert.Contains(t, logs.String(), "variable=RATCHET_NO_SUCH_SETTING")
}

// The job log settings apply, and a bad level names the variable.
func TestLookupEnvJobLogs(t *testing.T) {
	o, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_JOB_LOG_LEVEL=debug", "RATCHET_JOB_LOG_MAX_LINES=50", "RATCHET_LOG_RETENTION_DAYS=7"})
	require.NoError(t, err)
	assert.Equal(t, engine.JobLogOptions{Level: slog.LevelDebug, MaxLines: 50, Retention: 7 * 24 * time.Hour}, o.JobLogs)
	o, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_JOB_LOG_LEVEL=OFF"})
	require.NoError(t, err)
	assert.True(t, o.JobLogs.Disabled)
	_, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_JOB_LOG_LEVEL=loud"})
	assert.ErrorContains(t, err, "RATCHET_JOB_LOG_LEVEL")
	_, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_JOB_LOG_MAX_LINES=0"})
	assert.ErrorContains(t, err, "RATCHET_JOB_LOG_MAX_LINES")
}

// The per-task limits apply, and a malformed one names the variable.
func TestLookupEnvTaskLimits(t *testing.T) {
	o, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_WORKER_TASK_LIMITS=report=2, email.send = 10"})
	require.NoError(t, err)
	assert.Equal(t, engine.TaskLimits{"report": 2, "email.send": 10}, o.TaskTuning)
	for _, bad := range []string{"report", "report=0", "=3", "report=x"} {
		_, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_WORKER_TASK_LIMITS=" + bad})
		assert.ErrorContains(t, err, "RATCHET_WORKER_TASK_LIMITS", bad)
	}
}

// The claim concurrency applies, and 0 is refused.
func TestLookupEnvClaimConcurrency(t *testing.T) {
	o, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_WORKER_CLAIM_CONCURRENCY=3"})
	require.NoError(t, err)
	assert.Equal(t, 3, o.ClaimConcurrency)
	_, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_WORKER_CLAIM_CONCURRENCY=0"})
	assert.ErrorContains(t, err, "RATCHET_WORKER_CLAIM_CONCURRENCY")
}

// The circuit breaker settings apply.
func TestLookupEnvBreakers(t *testing.T) {
	o, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_CIRCUIT_BREAKER_ENABLED=true",
		"RATCHET_CIRCUIT_BREAKER_FAILURE_RATE_THRESHOLD=25", "RATCHET_CIRCUIT_BREAKER_SLIDING_WINDOW_SIZE=20",
		"RATCHET_CIRCUIT_BREAKER_MINIMUM_CALLS=5", "RATCHET_CIRCUIT_BREAKER_PERMITTED_CALLS_IN_HALF_OPEN=2",
		"RATCHET_CIRCUIT_BREAKER_WAIT_DURATION_SECONDS=15", "RATCHET_CIRCUIT_BREAKER_RETRY_DELAY_SECONDS=7"})
	require.NoError(t, err)
	assert.Equal(t, spi.CircuitBreakerConfig{FailureRateThreshold: 25, SlidingWindowSize: 20, MinimumCalls: 5,
		PermittedCallsInHalfOpen: 2, WaitDuration: 15 * time.Second}, o.Breakers.Config)
	assert.Equal(t, 7*time.Second, o.Breakers.RetryDelay)
	assert.False(t, o.Breakers.Disabled)
	o, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_CIRCUIT_BREAKER_ENABLED=false"})
	require.NoError(t, err)
	assert.True(t, o.Breakers.Disabled)
	_, _, err = engine.LookupEnv(engine.Options{}, []string{"RATCHET_CIRCUIT_BREAKER_ENABLED=maybe"})
	assert.ErrorContains(t, err, "RATCHET_CIRCUIT_BREAKER_ENABLED")
}

// The environment's 0 for the crash budget and the aging interval means
// what it means in the spec (none, off), and reaches the store as such.
func TestEnvZeroMeansFailOnFirstCrashAndNoAging(t *testing.T) {
	o, _, err := engine.LookupEnv(engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, NodeID: "n1", Concurrency: 1},
		[]string{"RATCHET_NODE_MAX_CRASH_REDELIVERIES=0", "RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES=0"})
	require.NoError(t, err)

	ctx := context.Background()
	s := memory.New()
	clock := clockwork.NewFakeClockAt(t0)
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	var order []string
	var mu sync.Mutex
	task := ratchet.NewVoidTask("t", func(ctx context.Context, name string) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, name)
		return nil
	})
	// A previous run of n1 claimed a job and died: with a budget of none,
	// the restart's recovery fails it at once.
	crashed, err := task.Submit(ctx, c, "crashed")
	require.NoError(t, err)
	require.NoError(t, s.Heartbeat(ctx, "n1", t0))
	_, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n1", Limit: 1, Now: t0})
	require.NoError(t, err)
	// A LOW job due an hour ago would age past HIGH (four boosts of the
	// default 15 minutes); with aging off, HIGH runs first.
	_, err = task.Submit(ctx, c, "low", ratchet.WithPriority(ratchet.PriorityLow), ratchet.At(t0.Add(-time.Hour)))
	require.NoError(t, err)
	high, err := task.Submit(ctx, c, "high", ratchet.WithPriority(ratchet.PriorityHigh))
	require.NoError(t, err)

	o.Client.Clock = clock
	eng, err := engine.New(s, o, task)
	require.NoError(t, err)
	assert.Equal(t, engine.FailOnFirstCrash, eng.Options().MaxCrashRedeliveries)
	assert.Equal(t, engine.AgingDisabled, eng.Options().PriorityBoostInterval)
	events, unsub := eng.Subscribe(10)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(ctx) }()
	for range 2 {
		<-events
	}
	j, err := s.GetJob(ctx, crashed)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, j.Status, "a budget of none fails the job on its first crash")
	assert.Equal(t, 0, j.CrashCount)
	j, err = s.GetJob(ctx, high)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusSucceeded, j.Status)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"high", "low"}, order, "no aging: priority first")
}

// The archive settings are checked: a bad value names the variable.
func TestArchiveSettings(t *testing.T) {
	for _, kv := range []string{"RATCHET_JOB_ARCHIVE_ENABLED=sometimes", "RATCHET_JOB_ARCHIVE_CRON=0 0 1 L * ?",
		"RATCHET_JOB_RETENTION_DAYS=0", "RATCHET_JOB_ARCHIVE_BATCH_SIZE=zero"} {
		_, _, err := engine.LookupEnv(engine.Options{}, []string{kv})
		require.Error(t, err, kv)
		name, _, _ := strings.Cut(kv, "=")
		assert.ErrorContains(t, err, name)
	}
	o, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_JOB_ARCHIVE_ENABLED=false"})
	require.NoError(t, err)
	assert.True(t, o.Archive.Disabled)
}

// The encryption module's variables are known, and not the engine's to
// warn about.
func TestLookupEnvLeavesEncryptionKeys(t *testing.T) {
	_, warnings, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_ENCRYPTION_KEYS=k:AAAA", "RATCHET_ENCRYPTION_CURRENT_KEY=k"})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Contains(t, engine.EnvSettingNames(), "RATCHET_ENCRYPTION_KEYS")
}

func TestLookupEnvRetryJitter(t *testing.T) {
	o, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_RETRY_JITTER=0.25"})
	require.NoError(t, err)
	assert.Equal(t, 0.25, o.RetryJitter)
	for _, bad := range []string{"1.5", "-0.1", "lots", "NaN"} {
		_, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_RETRY_JITTER=" + bad})
		assert.ErrorContains(t, err, "RATCHET_RETRY_JITTER", bad)
	}
}
