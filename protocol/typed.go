package protocol

import (
	"fmt"
	"io"
	"reflect"
)

// A family is written with its own types — its Params, its Result — and
// erased to a Family only where a registry holds it. The family's typed
// implementation (an unexported type of its package) has the methods of
// typedFamily, and of typedEnvironmental if some of its roles ask their
// environment; its exported Family type embeds Erased or ErasedEnv over it:
//
//	type family struct{} // the typed implementation
//	type Family struct {
//		protocol.ErasedEnv[family, Params, *Result]
//	}
//
// The erasure makes the one type check, at the boundary, and returns an
// error naming the family and both types when a value of another type
// arrives (the params of another family, say); the family's code then has
// no downcast of its params or its result.
//
// Which optional interfaces the erased family implements is decided at
// compile time, by the type the family embeds: Erased implements Family and
// Simulator — every family of the project can be simulated, so the typed
// contract requires the simulation's three methods — and ErasedEnv
// Environmental as well. The typed contracts are unexported on purpose:
// they are what a family's author implements, spelled out below and in
// docs/contributing.md, and not a further interface for the drivers, which
// see only Family, Simulator and Environmental (the package keeps to ten
// exported interfaces).
//
// A role's local data differs from role to role, so RoleConfig.Local stays
// an any; a family reads it with LocalOf, which converts it with an error
// of the same kind.

// typedFamily is Family and Simulator with the family's own types: P its
// params, R what Combine returns. The methods mean what Family's and
// Simulator's of the same names do; the erasure has checked that params and
// results are a P and an R.
type typedFamily[P, R any] interface {
	Name() string
	Info() Info
	ParseParams(raw map[string]any) (P, error)
	CheckAssignment(a Assignment, p P, simulated bool) error
	DecodeLocal(role string, table *LocalTable) (any, error)
	// NewRole builds the role of cfg.Self; p is cfg.Params, typed.
	NewRole(cfg RoleConfig, p P) (Role, error)
	Combine(a Assignment, p P, reports map[Party][]byte) (R, error)
	FormatResult(w io.Writer, result []byte) error

	// PrepareSimulation's Prepared.Params, when set, is a P.
	PrepareSimulation(raw map[string]any, roles Assignment, p P) (Prepared, error)
	NewSchedule(raw map[string]any, p P, a Assignment, rand io.Reader) (Schedule, error)
	// Grade grades r, what Combine returned; p and r are g.Params and
	// g.Result, typed.
	Grade(g Grading, p P, r R) (any, error)
}

// typedEnvironmental is Environmental with the family's params typed.
type typedEnvironmental[P any] interface {
	// SimulatedEnvironment builds party cfg.Self's own environment; p is
	// cfg.Params, typed.
	SimulatedEnvironment(cfg RoleConfig, p P) (Environment, error)
	// EnvironmentShape is Environmental's; the erased family answers 0, 0
	// (any, unknown) for params of another type.
	EnvironmentShape(role string, p P, a Assignment) (columns int, steps int64)
}

// Erased is a family whose typed implementation F, of params P and result
// R, is erased to a Family and a Simulator (see typedFamily in typed.go).
// Its zero value erases F's zero value.
type Erased[F typedFamily[P, R], P, R any] struct {
	// Typed is the family's typed implementation.
	Typed F
}

var (
	_ Family    = Erased[typedFamily[int, int], int, int]{}
	_ Simulator = Erased[typedFamily[int, int], int, int]{}
)

// Name implements Family.
func (e Erased[F, P, R]) Name() string { return e.Typed.Name() }

// Info implements Family.
func (e Erased[F, P, R]) Info() Info { return e.Typed.Info() }

// ParseParams implements Family.
func (e Erased[F, P, R]) ParseParams(raw map[string]any) (any, error) {
	p, err := e.Typed.ParseParams(raw)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// CheckAssignment implements Family.
func (e Erased[F, P, R]) CheckAssignment(a Assignment, params any, simulated bool) error {
	p, err := typed[P](e.Typed.Name(), "params", params)
	if err != nil {
		return err
	}
	return e.Typed.CheckAssignment(a, p, simulated)
}

// DecodeLocal implements Family.
func (e Erased[F, P, R]) DecodeLocal(role string, table *LocalTable) (any, error) {
	return e.Typed.DecodeLocal(role, table)
}

// NewRole implements Family.
func (e Erased[F, P, R]) NewRole(cfg RoleConfig) (Role, error) {
	p, err := typed[P](e.Typed.Name(), "params", cfg.Params)
	if err != nil {
		return nil, err
	}
	return e.Typed.NewRole(cfg, p)
}

// Combine implements Family.
func (e Erased[F, P, R]) Combine(a Assignment, params any, reports map[Party][]byte) (any, error) {
	p, err := typed[P](e.Typed.Name(), "params", params)
	if err != nil {
		return nil, err
	}
	r, err := e.Typed.Combine(a, p, reports)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// FormatResult implements Family.
func (e Erased[F, P, R]) FormatResult(w io.Writer, result []byte) error {
	return e.Typed.FormatResult(w, result)
}

// PrepareSimulation implements Simulator.
func (e Erased[F, P, R]) PrepareSimulation(raw map[string]any, roles Assignment, params any) (Prepared, error) {
	p, err := typed[P](e.Typed.Name(), "params", params)
	if err != nil {
		return Prepared{}, err
	}
	prep, err := e.Typed.PrepareSimulation(raw, roles, p)
	if err != nil {
		return Prepared{}, err
	}
	if prep.Params != nil {
		if _, err := typed[P](e.Typed.Name(), "completed params", prep.Params); err != nil {
			return Prepared{}, err
		}
	}
	return prep, nil
}

// NewSchedule implements Simulator.
func (e Erased[F, P, R]) NewSchedule(raw map[string]any, params any, a Assignment, rand io.Reader) (Schedule, error) {
	p, err := typed[P](e.Typed.Name(), "params", params)
	if err != nil {
		return nil, err
	}
	return e.Typed.NewSchedule(raw, p, a, rand)
}

// Grade implements Simulator.
func (e Erased[F, P, R]) Grade(g Grading) (any, error) {
	p, err := typed[P](e.Typed.Name(), "params", g.Params)
	if err != nil {
		return nil, err
	}
	r, err := typed[R](e.Typed.Name(), "result", g.Result)
	if err != nil {
		return nil, err
	}
	return e.Typed.Grade(g, p, r)
}

// ErasedEnv is Erased for a family some of whose roles ask their
// environment: it implements Environmental as well.
type ErasedEnv[F typedEnvFamily[P, R], P, R any] struct {
	Erased[F, P, R]
}

// typedEnvFamily is a typed family some of whose roles ask their
// environment.
type typedEnvFamily[P, R any] interface {
	typedFamily[P, R]
	typedEnvironmental[P]
}

var _ Environmental = ErasedEnv[typedEnvFamily[int, int], int, int]{}

// SimulatedEnvironment implements Environmental.
func (e ErasedEnv[F, P, R]) SimulatedEnvironment(cfg RoleConfig) (Environment, error) {
	p, err := typed[P](e.Typed.Name(), "params", cfg.Params)
	if err != nil {
		return nil, err
	}
	return e.Typed.SimulatedEnvironment(cfg, p)
}

// EnvironmentShape implements Environmental: 0, 0 (any, unknown) for params
// of another type.
func (e ErasedEnv[F, P, R]) EnvironmentShape(role string, params any, a Assignment) (int, int64) {
	p, err := typed[P](e.Typed.Name(), "params", params)
	if err != nil {
		return 0, 0
	}
	return e.Typed.EnvironmentShape(role, p, a)
}

// LocalOf returns cfg.Local, the local data of the party cfg.Self of
// family, as an L: L's zero value when the party has none (nil: its
// environment answers it, or its role needs none), an error naming the
// family, the party and both types when it is of another type.
func LocalOf[L any](family string, cfg RoleConfig) (L, error) {
	if cfg.Local == nil {
		var zero L
		return zero, nil
	}
	l, ok := cfg.Local.(L)
	if !ok {
		return l, fmt.Errorf("protocol %s: the local data of %s is of type %T, want %s", family, cfg.Self, cfg.Local, reflect.TypeFor[L]())
	}
	return l, nil
}

// typed returns v, the family's params or result (what names it), as a T,
// or an error naming family and both types.
func typed[T any](family, what string, v any) (T, error) {
	t, ok := v.(T)
	if !ok {
		return t, fmt.Errorf("protocol %s: %s of type %T, want %s", family, what, v, reflect.TypeFor[T]())
	}
	return t, nil
}
