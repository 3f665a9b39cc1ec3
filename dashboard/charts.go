package dashboard

import (
	"fmt"
	"html/template"
	"strings"
	"time"
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
	graphEdge struct{ From, To string }
)

// Chart sizes.
const (
	chartWidth  = 560
	chartHeight = 160
)

// lineChart draws series over time.
func lineChart(title string, series []chartSeries) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<figure class="chart"><figcaption>%s</figcaption><table class="mini">`, template.HTMLEscapeString(title))
	for _, s := range series {
		last := 0.0
		if n := len(s.Points); n > 0 {
			last = s.Points[n-1].V
		}
		fmt.Fprintf(&b, `<tr><td class="%s">%s</td><td>%.1f</td></tr>`, template.HTMLEscapeString(s.Class), template.HTMLEscapeString(s.Name), last)
	}
	b.WriteString(`</table></figure>`)
	return template.HTML(b.String())
}

// barChart draws bars.
func barChart(title string, bars []chartBar) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<figure class="chart"><figcaption>%s</figcaption><table class="mini">`, template.HTMLEscapeString(title))
	for _, x := range bars {
		fmt.Fprintf(&b, `<tr><td><a href="%s">%s</a></td><td>%.0f</td></tr>`, template.HTMLEscapeString(x.Href), template.HTMLEscapeString(x.Label), x.Value)
	}
	b.WriteString(`</table></figure>`)
	return template.HTML(b.String())
}

// graph draws a workflow's jobs and their dependencies.
func graph(title string, nodes []graphNode, edges []graphEdge) (template.HTML, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `<figure class="graph"><figcaption>%s</figcaption><ul>`, template.HTMLEscapeString(title))
	for _, n := range nodes {
		fmt.Fprintf(&b, `<li class="%s"><a href="%s">%s</a> %s</li>`, template.HTMLEscapeString(n.Class), template.HTMLEscapeString(n.Href),
			template.HTMLEscapeString(n.Label), template.HTMLEscapeString(n.Sub))
	}
	b.WriteString(`</ul></figure>`)
	_ = edges
	return template.HTML(b.String()), nil
}
