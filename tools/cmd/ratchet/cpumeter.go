package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The comparison's throughput follows the machine: on a shared VM the
// same binary's rate moves by a quarter within the hour. The machine's CPU
// time per job (the database's and the node's together, as /proc/stat
// counts them) moves much less, so --compare reports it beside the rates:
// a change that makes either side cheaper shows there even when the rates
// drown it in noise.

// machineCPU returns the CPU time the whole machine has spent busy (user,
// nice, system, irq and softirq of /proc/stat's "cpu" line), and false
// where there is no /proc/stat.
func machineCPU() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	return parseProcStat(b)
}

// clockTicks is USER_HZ, the unit of /proc/stat: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// parseProcStat reads the busy time of /proc/stat's first line: "cpu"
// then user, nice, system, idle, iowait, irq, softirq, ... in ticks.
func parseProcStat(b []byte) (time.Duration, bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user, nice, system, irq, softirq
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, true
}

// cpuMeter is the writer of a burn-down's progress lines (Ratchet's bench
// and compare/river print the same ones): it reads the machine's CPU time
// when a line starts with "inserting ", "inserted ", "working " and
// "worked " (after an optional "river: "), and so splits the run's CPU
// time into its insert and work phases. The work is counted from the
// "working" line, which follows what runs between the phases (the server's
// COPY, a CHECKPOINT), or, from a program that prints none, from the
// "inserted" line.
type cpuMeter struct {
	read func() (time.Duration, bool) // machineCPU, or a test's

	mu      sync.Mutex
	partial []byte
	marks   map[string]time.Duration // by phase word
	ok      bool
}

func newCPUMeter(read func() (time.Duration, bool)) *cpuMeter {
	return &cpuMeter{read: read, marks: map[string]time.Duration{}, ok: true}
}

func (m *cpuMeter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.partial = append(m.partial, p...)
	for {
		line, rest, found := bytes.Cut(m.partial, []byte("\n"))
		if !found {
			break
		}
		word, _, _ := strings.Cut(strings.TrimPrefix(string(line), "river: "), " ")
		switch word {
		case "inserting", "inserted", "working", "worked":
			t, ok := m.read()
			m.marks[word], m.ok = t, m.ok && ok
		}
		m.partial = append(m.partial[:0], rest...)
	}
	return len(p), nil
}

// perJob returns the machine's CPU time per job of the insert and of the
// work phase, zero when the lines or /proc/stat were missing.
func (m *cpuMeter) perJob(jobs int) cpuCost {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, okA := m.marks["inserting"]
	b, okB := m.marks["inserted"]
	c, okC := m.marks["worked"]
	if !m.ok || !okA || !okB || !okC || jobs <= 0 {
		return cpuCost{}
	}
	from := b
	if w, ok := m.marks["working"]; ok {
		from = w
	}
	return cpuCost{Insert: (b - a) / time.Duration(jobs), Work: (c - from) / time.Duration(jobs)}
}

// cpuCost is a burn-down's machine CPU time per job in each phase; zero
// when it could not be measured.
type cpuCost struct{ Insert, Work time.Duration }

func (c cpuCost) known() bool { return c.Insert > 0 && c.Work > 0 }

// cpuText is a pair's CPU figures for the comparison's line: Ratchet's
// (r) and River's (v) per job, and how many times River's Ratchet's is.
func cpuText(r, v cpuCost) string {
	if !r.known() || !v.known() {
		return ""
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return fmt.Sprintf("; machine CPU per job: insert %.1f / %.1f µs (River / Ratchet %.2f), work %.1f / %.1f µs (%.2f)",
		us(r.Insert), us(v.Insert), float64(v.Insert)/float64(r.Insert), us(r.Work), us(v.Work), float64(v.Work)/float64(r.Work))
}

// medianCPU is the median over the pairs of River's CPU per job over
// Ratchet's, in each phase; false unless every pair was measured.
func medianCPU(r, v []cpuCost) (insert, work float64, ok bool) {
	var ins, wk []float64
	for i := range r {
		if i >= len(v) || !r[i].known() || !v[i].known() {
			return 0, 0, false
		}
		ins = append(ins, float64(v[i].Insert)/float64(r[i].Insert))
		wk = append(wk, float64(v[i].Work)/float64(r[i].Work))
	}
	if len(ins) == 0 {
		return 0, 0, false
	}
	return median(ins), median(wk), true
}
