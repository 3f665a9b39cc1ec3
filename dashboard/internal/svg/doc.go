// Package svg draws the dashboard's pictures as inline SVG, server side:
// time-series charts, bar charts and the layered graph of a workflow. It
// has no JavaScript and no styles of its own beyond CSS classes, which
// the dashboard's stylesheet colours.
package svg
