// Package svg draws the dashboard's pictures as inline SVG, server side:
// time-series charts (LineChart), bar charts (BarChart) and the layered
// graph of a workflow (Graph). It has no JavaScript and no styles of its
// own beyond CSS classes, which the dashboard's stylesheet colours. Every
// text it writes (titles, labels, hrefs) is escaped, and an href that is
// not a relative, http or https URL is dropped, so its template.HTML is
// safe to embed as is.
//
// The CSS classes, by picture (the caller's classes — Series.Class,
// Bar.Class, Node.Class — are added next to them):
//
//	svg.chart.line-chart   a LineChart's root element
//	svg.chart.bar-chart    a BarChart's root element
//	svg.graph              a Graph's root element
//	rect.frame             a chart's plot area
//	line.axis              the x and y axes
//	g.grid line            the horizontal grid lines
//	text.tick              an axis tick's label (x: time, y: value)
//	g.legend               the legend; each entry holds a line with the
//	                       series' class and a text.legend-label
//	polyline.series        a series' line, with the series' class (e.g.
//	                       s-succeeded, s-failed)
//	circle.dot             a series of a single point, with its class
//	text.empty             the "no data yet" of an empty picture
//	g.bar-row              a bar's row (inside an a when Bar.Href is set)
//	rect.bar               a bar, with the bar's class (e.g. s-task)
//	text.bar-label         a bar's label
//	text.bar-value         a bar's value
//	path.edge              a graph's edge
//	path.arrow             an edge's arrowhead (fill it)
//	g.node                 a graph's node, with the node's class (e.g.
//	                       st-SUCCEEDED); it holds a rect, a
//	                       text.node-label and a text.node-sub (inside an
//	                       a when Node.Href is set)
package svg
