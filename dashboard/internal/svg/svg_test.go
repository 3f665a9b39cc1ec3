package svg

import (
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wellFormed parses out with encoding/xml to its end, and returns the
// start elements met.
func wellFormed(t *testing.T, out template.HTML) []xml.StartElement {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(out)))
	d.Strict = true
	var starts []xml.StartElement
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "output: %s", out)
		if s, ok := tok.(xml.StartElement); ok {
			starts = append(starts, s.Copy())
		}
	}
	require.NotEmpty(t, starts)
	assert.Equal(t, "svg", starts[0].Name.Local)
	return starts
}

// text returns the character data of out's elements, joined.
func text(t *testing.T, out template.HTML) string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(out)))
	var b strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		require.NoError(t, err)
		if c, ok := tok.(xml.CharData); ok {
			b.Write(c)
			b.WriteByte('\n')
		}
	}
}

// attrs returns the values of the attribute name of out's elements.
func attrs(starts []xml.StartElement, name string) []string {
	var out []string
	for _, s := range starts {
		for _, a := range s.Attr {
			if a.Name.Local == name {
				out = append(out, a.Value)
			}
		}
	}
	return out
}

const hostile = `<script>alert("x")</script> & 'q' "dq"` + "\x01\x00"

func TestLineChart(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC)
	pts := func(vs ...float64) []Point {
		out := make([]Point, len(vs))
		for i, v := range vs {
			out[i] = Point{T: t0.Add(time.Duration(i) * time.Minute), V: v}
		}
		return out
	}
	tests := []struct {
		name     string
		series   []Series
		want     []string // in the text
		wantNot  []string
		polyline int
	}{
		{name: "nil series", want: []string{"no data yet"}},
		{name: "all empty", series: []Series{{Name: "a"}, {Name: "b", Points: []Point{{T: t0, V: nanV()}}}}, want: []string{"no data yet"}},
		{
			name: "two series",
			series: []Series{
				{Name: "succeeded", Class: "s-succeeded", Points: pts(0, 800, 1200, 400)},
				{Name: "failed", Class: "s-failed", Points: pts(1, 2, 3)},
			},
			want:     []string{"succeeded", "failed", "15:00", "15:03", "1.5k", "0"},
			wantNot:  []string{"no data yet"},
			polyline: 2,
		},
		{name: "one point", series: []Series{{Name: "x", Class: "s-x", Points: pts(5)}}, want: []string{"x", "14:59", "15:01"}},
		{name: "hostile", series: []Series{{Name: hostile, Class: `s-a" onload="x`, Points: pts(1, 2)}}, want: []string{`<script>alert("x")</script> & 'q' "dq"`}, polyline: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := LineChart("Throughput "+tt.name, tt.series, 560, 160)
			starts := wellFormed(t, out)
			txt := text(t, out)
			assert.Contains(t, txt, "Throughput "+tt.name, "the <title>")
			for _, w := range tt.want {
				assert.Contains(t, txt, w)
			}
			for _, w := range tt.wantNot {
				assert.NotContains(t, txt, w)
			}
			n := 0
			for _, s := range starts {
				if s.Name.Local == "polyline" {
					n++
				}
				assert.NotEqual(t, "script", s.Name.Local)
				for _, a := range s.Attr {
					assert.False(t, strings.HasPrefix(a.Name.Local, "on"), "attribute %s", a.Name.Local)
					assert.NotEqual(t, "style", a.Name.Local)
				}
			}
			assert.Equal(t, tt.polyline, n)
		})
	}
}

func TestLineChartLongSpan(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	out := LineChart("week", []Series{{Name: "a", Points: []Point{{T: t0, V: 1}, {T: t0.Add(72 * time.Hour), V: 2}}}}, 0, 0)
	wellFormed(t, out)
	assert.Contains(t, text(t, out), "Dec 1 00:00")
}

func TestBarChart(t *testing.T) {
	bars := []Bar{
		{Label: "send-email", Value: 1200, Class: "s-task", Href: "/ops/jobs?task=send-email"},
		{Label: hostile, Value: 3, Class: "s-task", Href: "javascript:alert(1)"},
		{Label: "plain", Value: 0},
		{Label: "abs", Value: 7, Href: "https://example.com/x?a=1&b=2"},
		{Label: "data", Value: 7, Href: " data:text/html,hi"},
	}
	out := BarChart(`Tasks <&>`, bars, 400)
	starts := wellFormed(t, out)
	txt := text(t, out)
	assert.Contains(t, txt, "Tasks <&>")
	assert.Contains(t, txt, "1.2k")
	assert.Contains(t, txt, `<script>alert("x")</script>`)
	assert.NotContains(t, string(out), "<script")
	assert.Equal(t, []string{"/ops/jobs?task=send-email", "https://example.com/x?a=1&b=2"}, attrs(starts, "href"))
	rects := 0
	for _, s := range starts {
		if s.Name.Local == "rect" {
			rects++
		}
	}
	assert.Equal(t, len(bars), rects)

	empty := BarChart("none", nil, 0)
	wellFormed(t, empty)
	assert.Contains(t, text(t, empty), "no data yet")
}

func TestSafeHref(t *testing.T) {
	for href, want := range map[string]string{
		"/ops/jobs/0b7c":          "/ops/jobs/0b7c",
		"jobs?x=1&y=2":            "jobs?x=1&amp;y=2",
		"http://a.example/":       "http://a.example/",
		"HTTPS://a.example/":      "HTTPS://a.example/",
		"javascript:alert(1)":     "",
		"JavaScript:alert(1)":     "",
		" javascript:alert(1)":    "",
		"java\tscript:alert(1)":   "",
		"data:text/html,x":        "",
		"vbscript:x":              "",
		"":                        "",
		`/x"><script>`:            "/x&#34;&gt;&lt;script&gt;",
		"mailto:someone@example":  "",
		"//evil.example/relative": "//evil.example/relative",
	} {
		assert.Equal(t, want, safeHref(href), href)
	}
}

func TestHumanize(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 12: "12", 0.5: "0.5", 999: "999", 1000: "1k", 1234: "1.2k", 999_960: "1M",
		3_400_000: "3.4M", 5e9: "5G", -1500: "-1.5k",
	} {
		assert.Equal(t, want, humanize(v), "%v", v)
	}
}

func TestLayout(t *testing.T) {
	n := func(ids ...string) []Node {
		out := make([]Node, len(ids))
		for i, id := range ids {
			out[i] = Node{ID: id, Label: id}
		}
		return out
	}
	t.Run("chain", func(t *testing.T) {
		at, _, err := layout(n("c", "b", "a"), []Edge{{From: "a", To: "b"}, {From: "b", To: "c"}})
		require.NoError(t, err)
		assert.Equal(t, 0, at["a"].layer)
		assert.Equal(t, 1, at["b"].layer)
		assert.Equal(t, 2, at["c"].layer)
	})
	t.Run("diamond and a long edge", func(t *testing.T) {
		// a → b, a → c, b → d, c → d, a → d: d is on the longest path's layer.
		at, layers, err := layout(n("a", "b", "c", "d"), []Edge{{From: "a", To: "b"}, {From: "a", To: "c"}, {From: "b", To: "d"}, {From: "c", To: "d"}, {From: "a", To: "d"}, {From: "a", To: "b"}})
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"a": 0, "b": 1, "c": 1, "d": 2},
			map[string]int{"a": at["a"].layer, "b": at["b"].layer, "c": at["c"].layer, "d": at["d"].layer})
		assert.Len(t, layers[1], 2)
	})
	t.Run("barycenter uncrosses", func(t *testing.T) {
		// a1 → b2 and a2 → b1, given in crossing order.
		at, _, err := layout(n("a1", "a2", "b1", "b2"), []Edge{{From: "a1", To: "b2"}, {From: "a2", To: "b1"}})
		require.NoError(t, err)
		assert.Equal(t, at["a1"].pos < at["a2"].pos, at["b2"].pos < at["b1"].pos, "no crossing: %v", at)
	})
}

func TestGraph(t *testing.T) {
	nodes := []Node{
		{ID: "a", Label: "a", Sub: "SUCCEEDED", Class: "st-SUCCEEDED", Href: "/ops/jobs/0b7c"},
		{ID: "b", Label: "b", Sub: "RUNNING", Class: "st-RUNNING"},
		{ID: "c", Label: "c", Class: "st-PENDING", Href: "javascript:alert(1)"},
	}
	out, err := Graph("wf", nodes, []Edge{{From: "a", To: "b"}, {From: "b", To: "c"}})
	require.NoError(t, err)
	starts := wellFormed(t, out)
	assert.Equal(t, []string{"/ops/jobs/0b7c"}, attrs(starts, "href"))
	// The boxes' y grow along the chain.
	var ys []string
	for _, s := range starts {
		if s.Name.Local == "rect" {
			ys = append(ys, attrs([]xml.StartElement{s}, "y")[0])
		}
	}
	assert.Equal(t, []string{"12", "108", "204"}, ys)
	edges := 0
	for _, c := range attrs(starts, "class") {
		if c == "edge" {
			edges++
		}
	}
	assert.Equal(t, 2, edges)
	txt := text(t, out)
	for _, w := range []string{"wf", "SUCCEEDED", "RUNNING"} {
		assert.Contains(t, txt, w)
	}
}

func TestGraphHostile(t *testing.T) {
	out, err := Graph(hostile, []Node{{ID: hostile, Label: hostile, Sub: "<b>&amp;</b>", Class: `x"y`, Href: `/a"b<c`}}, nil)
	require.NoError(t, err)
	starts := wellFormed(t, out)
	assert.NotContains(t, string(out), "<script")
	assert.NotContains(t, string(out), "<b>")
	assert.Contains(t, text(t, out), "<b>&amp;</b>", "the text reads as given")
	assert.Equal(t, []string{`/a"b<c`}, attrs(starts, "href"))
	assert.Contains(t, attrs(starts, "class"), `node x"y`)
}

func TestGraphErrors(t *testing.T) {
	nodes := []Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	tests := []struct {
		name  string
		nodes []Node
		edges []Edge
		want  []string
	}{
		{name: "unknown to", nodes: nodes, edges: []Edge{{From: "a", To: "zz"}}, want: []string{`"a"`, `unknown node "zz"`}},
		{name: "unknown from", nodes: nodes, edges: []Edge{{From: "yy", To: "a"}}, want: []string{`unknown node "yy"`}},
		{name: "unknown both", nodes: nodes, edges: []Edge{{From: "yy", To: "zz"}}, want: []string{`"yy"`, `"zz"`}},
		{name: "self loop", nodes: nodes, edges: []Edge{{From: "a", To: "b"}, {From: "c", To: "c"}}, want: []string{`cycle "c" → "c"`}},
		{name: "cycle", nodes: nodes, edges: []Edge{{From: "d", To: "a"}, {From: "a", To: "b"}, {From: "b", To: "c"}, {From: "c", To: "a"}}, want: []string{`"a" → "b"`, `"b" → "c"`, `"c" → "a"`}},
		{name: "duplicate", nodes: append(nodes, Node{ID: "b"}), want: []string{`node "b" is given twice`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Graph("g", tt.nodes, tt.edges)
			require.ErrorIs(t, err, ErrGraph)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			if tt.name == "cycle" {
				assert.NotContains(t, err.Error(), `"d"`, "d leads into the cycle, is not in it")
			}
		})
	}
}

func TestGraphEmpty(t *testing.T) {
	out, err := Graph("nothing", nil, nil)
	require.NoError(t, err)
	wellFormed(t, out)
	assert.Contains(t, text(t, out), "no data yet")
}

func TestGraph500(t *testing.T) {
	// A fan-out and fan-in of 500 nodes in 10 layers of 50, each node
	// depending on two of the layer above.
	var nodes []Node
	var edges []Edge
	id := func(l, i int) string { return fmt.Sprintf("n%d-%d", l, i) }
	for l := range 10 {
		for i := range 50 {
			nodes = append(nodes, Node{ID: id(l, i), Label: id(l, i), Sub: "PENDING", Class: "st-PENDING", Href: "/ops/jobs/" + id(l, i)})
			if l > 0 {
				edges = append(edges, Edge{From: id(l-1, (i*7)%50), To: id(l, i)}, Edge{From: id(l-1, (i*13+5)%50), To: id(l, i)})
			}
		}
	}
	out, err := Graph("big", nodes, edges)
	require.NoError(t, err)
	starts := wellFormed(t, out)
	assert.Len(t, attrs(starts, "href"), 500)
	w := attrs(starts[:1], "width")[0]
	assert.Equal(t, fmt.Sprint(2*graphPad+50*nodeW+49*nodeGapX), w, "as wide as the widest layer")
}

func nanV() float64 { var z float64; return z / z }

func TestGraphEdgeLabels(t *testing.T) {
	nodes := []Node{{ID: "a", Label: "a"}, {ID: "b", Label: "b"}, {ID: "c", Label: "c"}}
	out, err := Graph("wf", nodes, []Edge{{From: "a", To: "b"}, {From: "a", To: "c", Label: "on failure", Class: "on-failure"}})
	require.NoError(t, err)
	starts := wellFormed(t, out)
	assert.Contains(t, attrs(starts, "class"), "edge on-failure", "the edge carries its class")
	assert.Contains(t, attrs(starts, "class"), "arrow on-failure", "so does its arrowhead")
	assert.Contains(t, attrs(starts, "class"), "edge-label on-failure", "and its label")
	assert.Contains(t, text(t, out), "on failure")
	assert.Equal(t, 1, strings.Count(string(out), "edge-label"), "an edge without a label draws none")
	again, err := Graph("wf", nodes, []Edge{{From: "a", To: "b"}, {From: "a", To: "c", Label: "on failure", Class: "on-failure"}})
	require.NoError(t, err)
	assert.Equal(t, out, again, "the same graph draws the same picture")
}
