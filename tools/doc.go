// Package tools holds the ratchet command (tools/cmd/ratchet) and its
// internal packages. Nothing imports this module.
//
// Dependencies beyond the Ratchet modules: github.com/schollz/progressbar/v3
// draws the progress bars of the demo and of the operator commands' bulk
// actions on a terminal (a solved problem, not worth
// hand-writing), and golang.org/x/term tells whether stderr is a terminal.
package tools
