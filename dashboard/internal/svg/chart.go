package svg

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
)

// Point is a value at a time.
type Point struct {
	T time.Time
	V float64
}

// Series is a named line of a LineChart; Class is its CSS class (e.g.
// "s-succeeded", "s-failed").
type Series struct {
	Name   string
	Class  string
	Points []Point
}

// LineChart sizes and margins.
const (
	minChartWidth  = 160
	minChartHeight = 80
	chartLeft      = 40 // the y labels
	chartRight     = 12
	chartTop       = 22 // the legend
	chartBottom    = 18 // the x labels
)

// LineChart draws series over a shared time axis (x: time, y: value from
// 0 up to a rounded max), with axis ticks and labels (times as 15:04, or
// 15:04:05 when the data spans less than ten minutes, or "Jan 2 15:04"
// when it spans more than a day; values humanized,
// 1.2k), a legend, and an accessible <title>. Points need not be sorted;
// NaN and infinite values are skipped and negative ones drawn at 0. Empty
// or all-empty series draw an empty frame that says "no data yet". A
// width or height too small is raised to 160×80.
func LineChart(title string, series []Series, width, height int) template.HTML {
	width, height = max(width, minChartWidth), max(height, minChartHeight)
	var b strings.Builder
	open(&b, "chart line-chart", "img", title, width, height)

	var t0, t1 time.Time
	vmax, n := 0.0, 0
	clean := make([][]Point, len(series))
	for i, s := range series {
		for _, p := range s.Points {
			if !finite(p.V) || p.T.IsZero() {
				continue
			}
			if n == 0 || p.T.Before(t0) {
				t0 = p.T
			}
			if n == 0 || p.T.After(t1) {
				t1 = p.T
			}
			vmax = max(vmax, p.V)
			n++
			clean[i] = append(clean[i], p)
		}
		slices.SortStableFunc(clean[i], func(a, b Point) int { return a.T.Compare(b.T) })
	}
	if n == 0 {
		empty(&b, width, height)
		b.WriteString(`</svg>`)
		return template.HTML(b.String())
	}
	if !t1.After(t0) { // one instant: a minute either side
		t0, t1 = t0.Add(-time.Minute), t1.Add(time.Minute)
	}
	step := niceStep(vmax / 4)
	top := math.Max(step, math.Ceil(vmax/step)*step)

	px0, px1 := float64(chartLeft), float64(width-chartRight)
	py0, py1 := float64(chartTop), float64(height-chartBottom)
	span := float64(t1.Sub(t0))
	x := func(t time.Time) float64 { return px0 + (px1-px0)*float64(t.Sub(t0))/span }
	y := func(v float64) float64 { return py1 - (py1-py0)*math.Max(v, 0)/top }

	// Frame, grid and y ticks.
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/><g class="grid">`,
		num(px0), num(py0), num(px1-px0), num(py1-py0))
	for v := step; v <= top*(1+1e-9); v += step {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, num(px0), num(y(v)), num(px1), num(y(v)))
	}
	b.WriteString(`</g>`)
	for v := 0.0; v <= top*(1+1e-9); v += step {
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`,
			num(px0-4), num(y(v)), esc(humanize(v)))
	}
	// x ticks.
	layout := "15:04"
	switch span := t1.Sub(t0); {
	case span > 24*time.Hour:
		layout = "Jan 2 15:04"
	case span < 10*time.Minute: // ticks less than two minutes apart need their seconds
		layout = "15:04:05"
	}
	ticks := max(2, min(6, int((px1-px0)/90)+1))
	for i := range ticks {
		t := t0.Add(time.Duration(float64(t1.Sub(t0)) * float64(i) / float64(ticks-1)))
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case ticks - 1:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="%s">%s</text>`,
			num(x(t)), num(py1+13), anchor, esc(t.Format(layout)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/><line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`,
		num(px0), num(py1), num(px1), num(py1), num(px0), num(py0), num(px0), num(py1))

	// Series.
	for i, s := range series {
		pts := clean[i]
		switch len(pts) {
		case 0:
			continue
		case 1:
			fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="2"><title>%s</title></circle>`,
				classes("dot", s.Class), num(x(pts[0].T)), num(y(pts[0].V)), esc(s.Name))
			continue
		}
		fmt.Fprintf(&b, `<polyline class="%s" points="`, classes("series", s.Class))
		for j, p := range pts {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(num(x(p.T)) + "," + num(y(p.V)))
		}
		fmt.Fprintf(&b, `"><title>%s</title></polyline>`, esc(s.Name))
	}

	// Legend.
	b.WriteString(`<g class="legend">`)
	lx := px0
	for _, s := range series {
		name := truncate(s.Name, 24)
		fmt.Fprintf(&b, `<line class="%s" x1="%s" y1="9" x2="%s" y2="9"/><text class="legend-label" x="%s" y="9" dominant-baseline="middle">%s</text>`,
			classes("swatch", s.Class), num(lx), num(lx+14), num(lx+18), esc(name))
		lx += 18 + 6.5*float64(len([]rune(name))) + 14
	}
	b.WriteString(`</g></svg>`)
	return template.HTML(b.String())
}

// Bar is a bar of a BarChart; Class is its CSS class (e.g. "s-task"), and
// Href, optional, a relative or http(s) URL the bar links to.
type Bar struct {
	Label string
	Value float64
	Class string
	Href  string
}

// BarChart sizes.
const (
	barRow    = 22
	barHeight = 14
	barPad    = 6
)

// BarChart draws horizontal bars with their labels and values, one row
// each, the longest bar for the largest value; NaN, infinite and negative
// values draw no bar. A long label is cut with "…" (the bar's <title>
// holds it whole). No bars draw a frame that says "no data yet". A width
// too small is raised to 160.
func BarChart(title string, bars []Bar, width int) template.HTML {
	width = max(width, minChartWidth)
	var b strings.Builder
	if len(bars) == 0 {
		open(&b, "chart bar-chart", "group", title, width, minChartHeight)
		empty(&b, width, minChartHeight)
		b.WriteString(`</svg>`)
		return template.HTML(b.String())
	}
	height := len(bars)*barRow + 2*barPad
	open(&b, "chart bar-chart", "group", title, width, height)

	labelChars, vmax := 1, 0.0
	for _, bar := range bars {
		labelChars = max(labelChars, len([]rune(bar.Label)))
		if finite(bar.Value) {
			vmax = max(vmax, bar.Value)
		}
	}
	labelW := math.Min(6.5*float64(labelChars)+8, float64(width)*0.4)
	const valueW = 48
	x0 := labelW
	barMax := math.Max(float64(width)-x0-valueW, 10)
	for i, bar := range bars {
		y := float64(barPad + i*barRow)
		href := safeHref(bar.Href)
		if href != "" {
			fmt.Fprintf(&b, `<a href="%s">`, href)
		}
		w := 0.0
		if finite(bar.Value) && bar.Value > 0 && vmax > 0 {
			w = math.Max(1, barMax*bar.Value/vmax)
		}
		fmt.Fprintf(&b, `<g class="bar-row"><title>%s: %s</title>`, esc(bar.Label), esc(humanize(bar.Value)))
		fmt.Fprintf(&b, `<text class="bar-label" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`,
			num(x0-6), num(y+barRow/2), esc(truncate(bar.Label, int((labelW-8)/6.5))))
		fmt.Fprintf(&b, `<rect class="%s" x="%s" y="%s" width="%s" height="%d"/>`,
			classes("bar", bar.Class), num(x0), num(y+(barRow-barHeight)/2), num(w), barHeight)
		fmt.Fprintf(&b, `<text class="bar-value" x="%s" y="%s" dominant-baseline="middle">%s</text></g>`,
			num(x0+w+4), num(y+barRow/2), esc(humanize(bar.Value)))
		if href != "" {
			b.WriteString(`</a>`)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
