package svg

import (
	"errors"
	"fmt"
	"html/template"
	"slices"
	"strings"
)

// Node is a node of a Graph: Label its first line, Sub an optional second
// (e.g. the status), Class its CSS class (e.g. "st-SUCCEEDED"), Href an
// optional relative or http(s) URL the node links to.
type Node struct{ ID, Label, Sub, Class, Href string }

// Edge is an edge of a Graph, from the node of ID From to the node of ID
// To: Class is its CSS class besides "edge" (e.g. "on-failure"), Label an
// optional text drawn at its middle (e.g. the edge's condition).
type Edge struct{ From, To, Label, Class string }

// ErrGraph is the error of a graph that cannot be drawn: a node's ID
// twice, an edge naming an unknown node, or a cycle. Graph's errors wrap
// it and name the nodes involved.
var ErrGraph = errors.New("svg: invalid graph")

// Graph sizes.
const (
	nodeW     = 160
	nodeH     = 40
	nodeGapX  = 24
	nodeGapY  = 56
	graphPad  = 12
	nodeChars = 24 // the runes of a node's line that fit its box
	sweeps    = 4  // barycenter passes down and up
)

// placed is a node's layer and position inside it.
type placed struct {
	layer, pos int
}

// layout validates the graph and returns each node's layer (the longest
// path from a root) and order inside its layer, and the layers by index.
// Duplicate edges count once.
func layout(nodes []Node, edges []Edge) (map[string]placed, [][]int, error) {
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if _, dup := index[n.ID]; dup {
			return nil, nil, fmt.Errorf("%w: node %q is given twice", ErrGraph, n.ID)
		}
		index[n.ID] = i
	}
	succ := make([][]int, len(nodes))
	pred := make([][]int, len(nodes))
	seen := make(map[[2]int]bool, len(edges))
	for _, e := range edges {
		f, okF := index[e.From]
		t, okT := index[e.To]
		switch {
		case !okF && !okT:
			return nil, nil, fmt.Errorf("%w: edge %q → %q names unknown nodes %q and %q", ErrGraph, e.From, e.To, e.From, e.To)
		case !okF:
			return nil, nil, fmt.Errorf("%w: edge %q → %q names unknown node %q", ErrGraph, e.From, e.To, e.From)
		case !okT:
			return nil, nil, fmt.Errorf("%w: edge %q → %q names unknown node %q", ErrGraph, e.From, e.To, e.To)
		}
		if seen[[2]int{f, t}] {
			continue
		}
		seen[[2]int{f, t}] = true
		succ[f] = append(succ[f], t)
		pred[t] = append(pred[t], f)
	}

	// Kahn's topological order; the layer of a node is the longest path to it.
	indeg := make([]int, len(nodes))
	for i := range nodes {
		indeg[i] = len(pred[i])
	}
	queue := make([]int, 0, len(nodes))
	for i := range nodes {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	layerOf := make([]int, len(nodes))
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for _, v := range succ[u] {
			layerOf[v] = max(layerOf[v], layerOf[u]+1)
			if indeg[v]--; indeg[v] == 0 {
				queue = append(queue, v)
			}
		}
	}
	if len(queue) < len(nodes) {
		return nil, nil, cycleError(nodes, succ, indeg)
	}

	// Layers, in input order first, then barycenter sweeps.
	var layers [][]int
	for _, u := range queue {
		for len(layers) <= layerOf[u] {
			layers = append(layers, nil)
		}
	}
	for i := range nodes {
		layers[layerOf[i]] = append(layers[layerOf[i]], i)
	}
	pos := make([]float64, len(nodes))
	setPos := func(l []int) {
		for p, u := range l {
			pos[u] = float64(p)
		}
	}
	for _, l := range layers {
		setPos(l)
	}
	reorder := func(l []int, adj [][]int) {
		bary := make(map[int]float64, len(l))
		for _, u := range l {
			if len(adj[u]) == 0 {
				bary[u] = pos[u] // no neighbours there: keep its place
				continue
			}
			sum := 0.0
			for _, v := range adj[u] {
				sum += pos[v]
			}
			bary[u] = sum / float64(len(adj[u]))
		}
		slices.SortStableFunc(l, func(a, b int) int {
			switch ba, bb := bary[a], bary[b]; {
			case ba < bb:
				return -1
			case ba > bb:
				return 1
			}
			return 0
		})
		setPos(l)
	}
	for range sweeps {
		for i := 1; i < len(layers); i++ {
			reorder(layers[i], pred)
		}
		for i := len(layers) - 2; i >= 0; i-- {
			reorder(layers[i], succ)
		}
	}
	out := make(map[string]placed, len(nodes))
	for li, l := range layers {
		for p, u := range l {
			out[nodes[u].ID] = placed{layer: li, pos: p}
		}
	}
	return out, layers, nil
}

// cycleError names a cycle among the nodes Kahn's order could not reach
// (those with indeg > 0 left): following a remaining predecessor from any
// of them ends in one.
func cycleError(nodes []Node, succ [][]int, indeg []int) error {
	left := make([]bool, len(nodes))
	start := -1
	for i, d := range indeg {
		if d > 0 {
			left[i] = true
			if start < 0 {
				start = i
			}
		}
	}
	// Walk successors inside the remaining set until a node repeats.
	// Every remaining node has a remaining predecessor, but not
	// necessarily a remaining successor; walk predecessors instead.
	pred := make([][]int, len(nodes))
	for u, vs := range succ {
		for _, v := range vs {
			if left[u] && left[v] {
				pred[v] = append(pred[v], u)
			}
		}
	}
	at := map[int]int{}
	var path []int
	u := start
	for {
		if i, ok := at[u]; ok {
			path = path[i:]
			break
		}
		at[u] = len(path)
		path = append(path, u)
		u = pred[u][0]
	}
	slices.Reverse(path) // predecessors walked: reverse to edge order
	names := make([]string, 0, len(path)+1)
	for _, u := range path {
		names = append(names, fmt.Sprintf("%q", nodes[u].ID))
	}
	names = append(names, names[0])
	return fmt.Errorf("%w: cycle %s", ErrGraph, strings.Join(names, " → "))
}

// Graph lays out a DAG in layers, top to bottom (a node's layer is its
// longest path from the roots; the order inside a layer comes from
// barycenter passes that cut crossings), draws each node as a box with
// its Label and Sub, a link when Href is set, and each edge as a curve
// with an arrowhead and its Label at its middle. The picture is as wide as the widest layer (the page
// scrolls). No nodes draw a frame that says "no data yet". A node's ID
// twice, an edge naming an unknown node, or a cycle is an error wrapping
// ErrGraph that names the nodes involved.
func Graph(title string, nodes []Node, edges []Edge) (template.HTML, error) {
	at, layers, err := layout(nodes, edges)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if len(nodes) == 0 {
		open(&b, "graph", "group", title, 320, minChartHeight)
		empty(&b, 320, minChartHeight)
		b.WriteString(`</svg>`)
		return template.HTML(b.String()), nil
	}
	widest := 0
	for _, l := range layers {
		widest = max(widest, len(l))
	}
	width := 2*graphPad + widest*nodeW + (widest-1)*nodeGapX
	height := 2*graphPad + len(layers)*nodeH + (len(layers)-1)*nodeGapY
	// A node's top-left corner: each layer centred.
	corner := func(p placed) (float64, float64) {
		n := len(layers[p.layer])
		lw := float64(n*nodeW + (n-1)*nodeGapX)
		x := (float64(width)-lw)/2 + float64(p.pos*(nodeW+nodeGapX))
		y := float64(graphPad + p.layer*(nodeH+nodeGapY))
		return x, y
	}
	open(&b, "graph", "group", title, width, height)

	// Edges first, so that the boxes cover their ends.
	seen := make(map[Edge]bool, len(edges))
	for _, e := range edges {
		if seen[e] {
			continue
		}
		seen[e] = true
		fx, fy := corner(at[e.From])
		tx, ty := corner(at[e.To])
		x1, y1 := fx+nodeW/2, fy+nodeH
		x2, y2 := tx+nodeW/2, ty-6 // the arrowhead's base
		my := (y1 + y2) / 2
		fmt.Fprintf(&b, `<path class="%s" d="M%s %s C%s %s %s %s %s %s"/>`, classes("edge", e.Class),
			num(x1), num(y1), num(x1), num(my), num(x2), num(my), num(x2), num(y2))
		fmt.Fprintf(&b, `<path class="%s" d="M%s %s L%s %s L%s %s Z"/>`, classes("arrow", e.Class),
			num(x2-4), num(y2), num(x2+4), num(y2), num(x2), num(ty))
	}
	// The labels after every edge, so that no edge crosses one.
	labelled := make(map[Edge]bool, len(edges))
	for _, e := range edges {
		if e.Label == "" || labelled[e] {
			continue
		}
		labelled[e] = true
		fx, fy := corner(at[e.From])
		tx, ty := corner(at[e.To])
		fmt.Fprintf(&b, `<text class="%s" x="%s" y="%s" text-anchor="middle" dominant-baseline="middle">%s</text>`,
			classes("edge-label", e.Class), num((fx+tx)/2+nodeW/2), num((fy+nodeH+ty-6)/2), esc(truncate(e.Label, nodeChars)))
	}
	for _, n := range nodes {
		x, y := corner(at[n.ID])
		href := safeHref(n.Href)
		if href != "" {
			fmt.Fprintf(&b, `<a href="%s">`, href)
		}
		tip := n.Label
		if n.Sub != "" {
			tip += " — " + n.Sub
		}
		fmt.Fprintf(&b, `<g class="%s"><title>%s</title><rect x="%s" y="%s" width="%d" height="%d" rx="4"/>`,
			classes("node", n.Class), esc(tip), num(x), num(y), nodeW, nodeH)
		ly := y + nodeH/2
		if n.Sub != "" {
			ly = y + 15
		}
		fmt.Fprintf(&b, `<text class="node-label" x="%s" y="%s" text-anchor="middle" dominant-baseline="middle">%s</text>`,
			num(x+nodeW/2), num(ly), esc(truncate(n.Label, nodeChars)))
		if n.Sub != "" {
			fmt.Fprintf(&b, `<text class="node-sub" x="%s" y="%s" text-anchor="middle" dominant-baseline="middle">%s</text>`,
				num(x+nodeW/2), num(y+30), esc(truncate(n.Sub, nodeChars)))
		}
		b.WriteString(`</g>`)
		if href != "" {
			b.WriteString(`</a>`)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), nil
}
