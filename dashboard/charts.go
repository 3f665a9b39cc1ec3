package dashboard

import (
	"html/template"
	"time"

	"github.com/ratchet-go/ratchet/dashboard/internal/svg"
)

// The charts' inputs, mirroring the svg package's, so that the views do
// not depend on how the pictures are drawn.
type (
	chartPoint struct {
		T time.Time
		V float64
	}
	chartSeries struct {
		Name, Class string
		Points      []chartPoint
	}
	chartBar struct {
		Label string
		Value float64
		Class string
		Href  string
	}
	graphNode struct{ ID, Label, Sub, Class, Href string }
	graphEdge struct{ From, To, Label, Class string }
)

// Chart sizes.
const (
	chartWidth  = 480
	chartHeight = 180
	barWidth    = 560
)

// lineChart draws series over time (svg.LineChart).
func lineChart(title string, series []chartSeries) template.HTML {
	ss := make([]svg.Series, len(series))
	for i, s := range series {
		ps := make([]svg.Point, len(s.Points))
		for k, p := range s.Points {
			ps[k] = svg.Point{T: p.T, V: p.V}
		}
		ss[i] = svg.Series{Name: s.Name, Class: s.Class, Points: ps}
	}
	return svg.LineChart(title, ss, chartWidth, chartHeight)
}

// barChart draws bars (svg.BarChart).
func barChart(title string, bars []chartBar) template.HTML {
	bs := make([]svg.Bar, len(bars))
	for i, b := range bars {
		bs[i] = svg.Bar{Label: b.Label, Value: b.Value, Class: b.Class, Href: b.Href}
	}
	return svg.BarChart(title, bs, barWidth)
}

// graph draws a workflow's jobs and their dependencies (svg.Graph).
func graph(title string, nodes []graphNode, edges []graphEdge) (template.HTML, error) {
	ns := make([]svg.Node, len(nodes))
	for i, n := range nodes {
		ns[i] = svg.Node{ID: n.ID, Label: n.Label, Sub: n.Sub, Class: n.Class, Href: n.Href}
	}
	es := make([]svg.Edge, len(edges))
	for i, e := range edges {
		es[i] = svg.Edge{From: e.From, To: e.To, Label: e.Label, Class: e.Class}
	}
	return svg.Graph(title, ns, es)
}
