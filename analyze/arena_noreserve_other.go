//go:build unix && !linux

package analyze

const mapNoReserve = 0
