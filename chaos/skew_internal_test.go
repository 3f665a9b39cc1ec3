package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSkewClock: Now is the real time moved by the offset, which a change
// steps; durations stay real.
func TestSkewClock(t *testing.T) {
	c := newSkewClock(2 * time.Second)
	assert.InDelta(t, float64(2*time.Second), float64(c.Now().Sub(time.Now())), float64(100*time.Millisecond))
	c.set(-300 * time.Millisecond)
	assert.InDelta(t, float64(-300*time.Millisecond), float64(c.Now().Sub(time.Now())), float64(100*time.Millisecond))
	start := c.Now()
	assert.Less(t, c.Since(start), 100*time.Millisecond)
	assert.InDelta(t, float64(time.Second), float64(c.Until(start.Add(time.Second))), float64(100*time.Millisecond))
	timer := c.NewTimer(time.Millisecond)
	<-timer.Chan()
}

// TestFollowControl: a skew line sets the clock's offset and is answered
// by a skewed line; a line it does not know changes nothing.
func TestFollowControl(t *testing.T) {
	in, w := io.Pipe()
	var out bytes.Buffer
	pr, pw := io.Pipe()
	c := newSkewClock(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		followControl(in, c, NewLineWriter(pw), "node-1", slog.New(slog.DiscardHandler))
		_ = pw.Close()
	}()
	lines := bufio.NewScanner(io.TeeReader(pr, &out))
	next := func() Line {
		require.True(t, lines.Scan(), "a line: %s", out.String())
		var l Line
		require.NoError(t, json.Unmarshal(lines.Bytes(), &l))
		return l
	}
	_, _ = io.WriteString(w, "skew 250ms\n")
	l := next()
	assert.Equal(t, LineSkewed, l.Event)
	assert.Equal(t, "250ms", l.Skew)
	assert.Equal(t, "node-1", l.Node)
	assert.Equal(t, 250*time.Millisecond, c.get())

	_, _ = io.WriteString(w, "reboot now\nskew soon\n\nskew -1.5s\n")
	l = next()
	assert.Equal(t, "-1.5s", l.Skew, "the bad lines are skipped")
	assert.Equal(t, -1500*time.Millisecond, c.get())
	_ = w.Close()
	<-done
	assert.False(t, lines.Scan())

	_, err := parseControl("skew 1s 2s")
	assert.Error(t, err)
	d, err := parseControl("skew 0s")
	require.NoError(t, err)
	assert.Zero(t, d)
}
