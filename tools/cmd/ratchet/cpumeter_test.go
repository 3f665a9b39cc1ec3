package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	// user nice system idle iowait irq softirq steal: busy = 100+2+30+4+5 ticks.
	got, ok := parseProcStat([]byte("cpu  100 2 30 9999 7 4 5 8 0 0\ncpu0 50 1 15 5000 3 2 2 4 0 0\n"))
	require.True(t, ok)
	assert.Equal(t, 1410*time.Millisecond, got)
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5 6 7", "cpu 1 2 3"} {
		_, ok := parseProcStat([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
	if _, ok := machineCPU(); !ok {
		t.Log("no /proc/stat here")
	}
}

// The meter reads the clock at the three lines of either program, however
// the writes split them, and splits the CPU time by phase.
func TestCPUMeter(t *testing.T) {
	for _, prefix := range []string{"", "river: "} {
		now := time.Duration(0)
		m := newCPUMeter(func() (time.Duration, bool) { return now, true })
		write := func(s string) {
			_, err := m.Write([]byte(s))
			require.NoError(t, err)
		}
		now = 10 * time.Second
		write(prefix + "inserting 1000 jobs\n")
		now = 12 * time.Second
		write(prefix + "inserted 1000 jobs in 1s")
		now = 13 * time.Second // the line ends later: the mark is its end
		write(" (1000 jobs/s)\n" + prefix + "worked")
		now = 20 * time.Second
		write(" 1000 jobs in 3s\nsummary line\n")
		assert.Equal(t, cpuCost{Insert: 3 * time.Millisecond, Work: 7 * time.Millisecond}, m.perJob(1000), prefix)
	}
	// The work counts from the "working" line when there is one: what ran
	// between the phases is in neither.
	for _, prefix := range []string{"", "river: "} {
		now := time.Duration(0)
		m := newCPUMeter(func() (time.Duration, bool) { return now, true })
		for _, l := range []struct {
			at   time.Duration
			line string
		}{{10 * time.Second, "inserting 1000 jobs"}, {12 * time.Second, "inserted 1000 jobs in 1s"},
			{13 * time.Second, "server COPY of the same rows: 90000 rows/s"}, {15 * time.Second, "working 1000 jobs"}, {20 * time.Second, "worked 1000 jobs in 3s"}} {
			now = l.at
			_, err := m.Write([]byte(prefix + l.line + "\n"))
			require.NoError(t, err)
		}
		assert.Equal(t, cpuCost{Insert: 2 * time.Millisecond, Work: 5 * time.Millisecond}, m.perJob(1000), prefix)
	}
	// A missing line, or no /proc/stat, measures nothing.
	m := newCPUMeter(func() (time.Duration, bool) { return time.Second, true })
	_, _ = m.Write([]byte("inserted 1 jobs\nworked 1 jobs\n"))
	assert.Equal(t, cpuCost{}, m.perJob(1))
	m = newCPUMeter(func() (time.Duration, bool) { return 0, false })
	_, _ = m.Write([]byte("inserting 1 jobs\ninserted 1 jobs\nworked 1 jobs\n"))
	assert.Equal(t, cpuCost{}, m.perJob(1))
}

func TestCPUTextAndMedian(t *testing.T) {
	r := cpuCost{Insert: 5 * time.Microsecond, Work: 40 * time.Microsecond}
	v := cpuCost{Insert: 10 * time.Microsecond, Work: 60 * time.Microsecond}
	assert.Equal(t, "; machine CPU per job: insert 5.0 / 10.0 µs (River / Ratchet 2.00), work 40.0 / 60.0 µs (1.50)", cpuText(r, v))
	assert.Empty(t, cpuText(r, cpuCost{}))

	ins, work, ok := medianCPU([]cpuCost{r, r, r}, []cpuCost{v, {Insert: 20 * time.Microsecond, Work: 80 * time.Microsecond}, r})
	require.True(t, ok)
	assert.InDelta(t, 2.0, ins, 1e-9)
	assert.InDelta(t, 1.5, work, 1e-9)
	_, _, ok = medianCPU([]cpuCost{r}, []cpuCost{{}})
	assert.False(t, ok)
}
