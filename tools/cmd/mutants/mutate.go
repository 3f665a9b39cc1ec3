package main

import (
	"fmt"
	"go/scanner"
	"go/token"
)

// replacements are gremlins' mutators as token rewrites: the operator at a
// mutation's position and what the mutant writes instead.
var replacements = map[string]map[token.Token]string{
	"CONDITIONALS_BOUNDARY": {token.LSS: "<=", token.LEQ: "<", token.GTR: ">=", token.GEQ: ">"},
	"CONDITIONALS_NEGATION": {token.EQL: "!=", token.NEQ: "==", token.LSS: ">=", token.LEQ: ">", token.GTR: "<=", token.GEQ: "<"},
	"ARITHMETIC_BASE":       {token.ADD: "-", token.SUB: "+", token.MUL: "/", token.QUO: "*", token.REM: "*"},
	"INCREMENT_DECREMENT":   {token.INC: "--", token.DEC: "++"},
	"INVERT_NEGATIVES":      {token.SUB: "+"},
}

// mutate returns src with the operator at line:col (1-based, in bytes)
// rewritten as mutator kind does, and a description such as "<= for <".
func mutate(src []byte, line, col int, kind string) ([]byte, string, error) {
	rules, ok := replacements[kind]
	if !ok {
		return nil, "", fmt.Errorf("mutator %s is not supported", kind)
	}
	fset := token.NewFileSet()
	file := fset.AddFile("src.go", -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return nil, "", fmt.Errorf("no token at %d:%d", line, col)
		}
		p := fset.Position(pos)
		if p.Line < line || (p.Line == line && p.Column < col) {
			continue
		}
		if p.Line != line || p.Column != col {
			return nil, "", fmt.Errorf("no token at %d:%d", line, col)
		}
		with, ok := rules[tok]
		if !ok {
			return nil, "", fmt.Errorf("%s at %d:%d is %q, which %s does not change", tok, line, col, lit+tok.String(), kind)
		}
		off := p.Offset
		old := tok.String()
		out := make([]byte, 0, len(src)+1)
		out = append(out, src[:off]...)
		out = append(out, with...)
		out = append(out, src[off+len(old):]...)
		return out, with + " for " + old, nil
	}
}
