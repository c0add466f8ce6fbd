package ingest

import (
	"fmt"

	"github.com/tokentrace/tokentrace/formats"
)

// DefaultMaxSeriesPoints is the default Options.MaxSeriesPoints: 4M
// points, about 400 MB held (a point is 80 bytes and its share of the
// interned names). cmd sets it from --memory-budget.
const DefaultMaxSeriesPoints = 4 << 20

// SeriesBuf holds a run's series points within a cap: past Max points it
// thins them, keeping every 2nd, then 4th, … sample (samples numbered by
// the importer: a telemetry record, a Prometheus series' sample), so a
// 6M-point export is read in bounded memory and the series stay evenly
// spaced; Note says so. Metric, label and unit strings are interned (a
// telemetry file repeats them on every record). The zero value holds up to
// DefaultMaxSeriesPoints.
type SeriesBuf struct {
	// Max is the cap on points held (0: DefaultMaxSeriesPoints).
	Max    int64
	pts    []formats.SeriesPoint
	sample []int64 // the sample number of each point
	stride int64
	read   int64
	names  map[string]string
}

// Add adds point p of sample number k (samples are numbered from 0 by the
// caller, increasing).
func (s *SeriesBuf) Add(p formats.SeriesPoint, k int64) {
	s.read++
	if s.stride == 0 {
		s.stride = 1
	}
	if k%s.stride != 0 {
		return
	}
	p.Metric, p.Labels, p.Unit, p.ClockDomain = s.intern(p.Metric), s.intern(p.Labels), s.intern(p.Unit), s.intern(p.ClockDomain)
	max := s.Max
	if max <= 0 {
		max = DefaultMaxSeriesPoints
	}
	for int64(len(s.pts)) >= max {
		s.stride *= 2
		j := 0
		for i := range s.pts {
			if s.sample[i]%s.stride == 0 {
				s.pts[j], s.sample[j] = s.pts[i], s.sample[i]
				j++
			}
		}
		s.pts, s.sample = s.pts[:j], s.sample[:j]
		if k%s.stride != 0 {
			return
		}
	}
	s.pts = append(s.pts, p)
	s.sample = append(s.sample, k)
}

func (s *SeriesBuf) intern(v string) string {
	if v == "" {
		return ""
	}
	if s.names == nil {
		s.names = map[string]string{}
	}
	if w, ok := s.names[v]; ok {
		return w
	}
	if len(s.names) < 1<<16 {
		s.names[v] = v
	}
	return v
}

// Points returns the points held, in the order added.
func (s *SeriesBuf) Points() []formats.SeriesPoint { return s.pts }

// Note says how the series were thinned ("" when every point is held).
func (s *SeriesBuf) Note() string {
	if s.stride <= 1 {
		return ""
	}
	max := s.Max
	if max <= 0 {
		max = DefaultMaxSeriesPoints
	}
	return fmt.Sprintf("series thinned to every %d%s sample: %d of %d points kept (the cap is %d points, from --memory-budget)",
		s.stride, ordinalSuffix(s.stride), len(s.pts), s.read, max)
}

func ordinalSuffix(n int64) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}
