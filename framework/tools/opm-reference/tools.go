//go:build tools

// Package tools names opm's command, so that `go mod tidy` keeps its dependencies.
package tools

import (
	_ "github.com/operator-framework/operator-registry/cmd/opm"
)
