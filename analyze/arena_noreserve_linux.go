package analyze

import "syscall"

// mapNoReserve asks Linux not to account the reservation as committed
// memory (pages are committed as they are written).
const mapNoReserve = syscall.MAP_NORESERVE
