package formats

import "fmt"

// AppendRow appends request r and its events (in arrival order) to b: the
// row view written into the columns. r.RunID must be b.RunID (events' run
// ids and request keys are those of r); a Status that is none of the
// Status* constants and an event index that is not its position are
// refused (the columns cannot hold them).
func (b *Batch) AppendRow(r *Request, ev []Event) error {
	if r.RunID != b.RunID {
		return fmt.Errorf("formats: request of run %q appended to a batch of run %q", r.RunID, b.RunID)
	}
	st, ok := StatusCodeOf(r.Status)
	if !ok {
		return fmt.Errorf("formats: run %q request %d: status %q is none of ok, empty, error, cancelled", r.RunID, r.RequestKey, r.Status)
	}
	for j := range ev {
		if ev[j].RunID != r.RunID || ev[j].RequestKey != r.RequestKey {
			return fmt.Errorf("formats: run %q request %d: event %d has run_id %q request_key %d", r.RunID, r.RequestKey, j, ev[j].RunID, ev[j].RequestKey)
		}
		if ev[j].Index != int32(j) {
			return fmt.Errorf("formats: run %q request %d: event %d has index %d (an event's index is its position)", r.RunID, r.RequestKey, j, ev[j].Index)
		}
	}
	i := b.AddRequest(r.RequestKey)
	q := &b.Req
	q.Status[i] = st
	q.MessageCount[i] = r.MessageCount
	q.TokenMessageCount[i] = r.TokenMessageCount
	q.SourceID.Set(i, r.SourceID)
	q.XRequestID.Set(i, r.XRequestID)
	q.ResponseID.Set(i, r.ResponseID)
	q.TraceID.Set(i, r.TraceID)
	q.ErrorCode.SetPtr(i, r.ErrorCode)
	q.ErrorType.Set(i, r.ErrorType)
	q.ErrorText.Set(i, r.ErrorText)
	q.StartNs.SetPtr(i, r.StartNs)
	q.ClockDomain.Set(i, r.ClockDomain)
	q.ScheduledStartNs.SetPtr(i, r.ScheduledStartNs)
	q.ScheduledStartSource.Set(i, r.ScheduledStartSource)
	q.FirstTokenOffsetNs.SetPtr(i, r.FirstTokenOffsetNs)
	q.FirstContentOffsetNs.SetPtr(i, r.FirstContentOffsetNs)
	q.SecondTokenOffsetNs.SetPtr(i, r.SecondTokenOffsetNs)
	q.LastTokenOffsetNs.SetPtr(i, r.LastTokenOffsetNs)
	q.StreamEndOffsetNs.SetPtr(i, r.StreamEndOffsetNs)
	q.InputTokens.SetPtr(i, r.InputTokens)
	q.InputTokensSource.Set(i, r.InputTokensSource)
	q.OutputTokens.SetPtr(i, r.OutputTokens)
	q.OutputTokensSource.Set(i, r.OutputTokensSource)
	q.ReasoningTokens.SetPtr(i, r.ReasoningTokens)
	q.CachedInputTokens.SetPtr(i, r.CachedInputTokens)
	q.SessionID.Set(i, r.SessionID)
	q.TurnIndex.SetPtr(i, r.TurnIndex)
	q.ParentID.Set(i, r.ParentID)
	q.SpecSteps.SetPtr(i, r.SpecSteps)
	q.DraftTokens.SetPtr(i, r.DraftTokens)
	q.AcceptedTokens.SetPtr(i, r.AcceptedTokens)
	q.MaxTokens.SetPtr(i, r.MaxTokens)
	q.ReportedTTFTMs.SetPtr(i, r.ReportedTTFTMs)
	q.ReportedTTFOMs.SetPtr(i, r.ReportedTTFOMs)
	q.ReportedTTSTMs.SetPtr(i, r.ReportedTTSTMs)
	q.ReportedE2EMs.SetPtr(i, r.ReportedE2EMs)
	q.ReportedITLMs.SetPtr(i, r.ReportedITLMs)
	q.ReportedOutputTokens.SetPtr(i, r.ReportedOutputTokens)
	q.ReportedInputTokens.SetPtr(i, r.ReportedInputTokens)
	q.ReportedOutputTokensPS.SetPtr(i, r.ReportedOutputTokensPS)
	q.ServerKind.Set(i, r.ServerKind)
	q.ServerSource.Set(i, r.ServerSource)
	q.ServerRequestID.Set(i, r.ServerRequestID)
	q.ServerClockDomain.Set(i, r.ServerClockDomain)
	q.ServerArrivalNs.SetPtr(i, r.ServerArrivalNs)
	q.ServerQueueNs.SetPtr(i, r.ServerQueueNs)
	q.ServerPrefillNs.SetPtr(i, r.ServerPrefillNs)
	q.ServerDecodeNs.SetPtr(i, r.ServerDecodeNs)
	q.ServerInferenceNs.SetPtr(i, r.ServerInferenceNs)
	q.ServerTTFTNs.SetPtr(i, r.ServerTTFTNs)
	q.ServerE2ENs.SetPtr(i, r.ServerE2ENs)
	q.ServerTimePerTokenNs.SetPtr(i, r.ServerTimePerTokenNs)
	q.MatchQuality.Set(i, r.MatchQuality)
	q.ServerFinishReason.Set(i, r.ServerFinishReason)
	q.Corrections.Set(i, r.Corrections)
	q.InFlightAtStart.SetPtr(i, r.InFlightAtStart)
	q.EndBoundOffsetNs.SetPtr(i, r.EndBoundOffsetNs)
	q.EndBoundRule.Set(i, r.EndBoundRule)
	for j := range ev {
		e := &ev[j]
		k := b.AddMessage(e.OffsetNs, b.KindCode(e.Kind))
		m := &b.Msg
		if e.ReadIndex != int32(j) || len(m.ReadIndex) > 0 {
			b.SetReadIndex(k, e.ReadIndex)
		}
		if e.HasChoices {
			m.Choices.Set(k)
		}
		if e.Tokens != nil {
			m.Tokens.Set(k, *e.Tokens)
		}
		if e.Bytes != 0 || len(m.Bytes) > 0 {
			b.SetBytes(k, e.Bytes)
		}
		if e.Text != nil {
			m.Text.Append(k, *e.Text)
		}
		if e.ReasoningText != nil {
			m.ReasoningText.Append(k, *e.ReasoningText)
		}
		if e.FinishReason != "" {
			m.FinishReason.Append(k, e.FinishReason)
		}
	}
	return nil
}

// Row returns request i as a row (RunID the batch's). Its strings share
// the batch's memory; its pointers are fresh.
func (b *Batch) Row(i int) Request {
	q := &b.Req
	return Request{
		RunID:                  b.RunID,
		RequestKey:             q.Key[i],
		SourceID:               q.SourceID.Get(i),
		XRequestID:             q.XRequestID.Get(i),
		ResponseID:             q.ResponseID.Get(i),
		TraceID:                q.TraceID.Get(i),
		Status:                 q.Status[i].String(),
		ErrorCode:              q.ErrorCode.Ptr(i),
		ErrorType:              q.ErrorType.Get(i),
		ErrorText:              q.ErrorText.Get(i),
		StartNs:                q.StartNs.Ptr(i),
		ClockDomain:            q.ClockDomain.Get(i),
		ScheduledStartNs:       q.ScheduledStartNs.Ptr(i),
		ScheduledStartSource:   q.ScheduledStartSource.Get(i),
		FirstTokenOffsetNs:     q.FirstTokenOffsetNs.Ptr(i),
		FirstContentOffsetNs:   q.FirstContentOffsetNs.Ptr(i),
		SecondTokenOffsetNs:    q.SecondTokenOffsetNs.Ptr(i),
		LastTokenOffsetNs:      q.LastTokenOffsetNs.Ptr(i),
		StreamEndOffsetNs:      q.StreamEndOffsetNs.Ptr(i),
		InputTokens:            q.InputTokens.Ptr(i),
		InputTokensSource:      q.InputTokensSource.Get(i),
		OutputTokens:           q.OutputTokens.Ptr(i),
		OutputTokensSource:     q.OutputTokensSource.Get(i),
		ReasoningTokens:        q.ReasoningTokens.Ptr(i),
		CachedInputTokens:      q.CachedInputTokens.Ptr(i),
		SessionID:              q.SessionID.Get(i),
		TurnIndex:              q.TurnIndex.Ptr(i),
		ParentID:               q.ParentID.Get(i),
		SpecSteps:              q.SpecSteps.Ptr(i),
		DraftTokens:            q.DraftTokens.Ptr(i),
		AcceptedTokens:         q.AcceptedTokens.Ptr(i),
		MessageCount:           q.MessageCount[i],
		TokenMessageCount:      q.TokenMessageCount[i],
		MaxTokens:              q.MaxTokens.Ptr(i),
		ReportedTTFTMs:         q.ReportedTTFTMs.Ptr(i),
		ReportedTTFOMs:         q.ReportedTTFOMs.Ptr(i),
		ReportedTTSTMs:         q.ReportedTTSTMs.Ptr(i),
		ReportedE2EMs:          q.ReportedE2EMs.Ptr(i),
		ReportedITLMs:          q.ReportedITLMs.Ptr(i),
		ReportedOutputTokens:   q.ReportedOutputTokens.Ptr(i),
		ReportedInputTokens:    q.ReportedInputTokens.Ptr(i),
		ReportedOutputTokensPS: q.ReportedOutputTokensPS.Ptr(i),
		ServerKind:             q.ServerKind.Get(i),
		ServerSource:           q.ServerSource.Get(i),
		ServerRequestID:        q.ServerRequestID.Get(i),
		ServerClockDomain:      q.ServerClockDomain.Get(i),
		ServerArrivalNs:        q.ServerArrivalNs.Ptr(i),
		ServerQueueNs:          q.ServerQueueNs.Ptr(i),
		ServerPrefillNs:        q.ServerPrefillNs.Ptr(i),
		ServerDecodeNs:         q.ServerDecodeNs.Ptr(i),
		ServerInferenceNs:      q.ServerInferenceNs.Ptr(i),
		ServerTTFTNs:           q.ServerTTFTNs.Ptr(i),
		ServerE2ENs:            q.ServerE2ENs.Ptr(i),
		ServerTimePerTokenNs:   q.ServerTimePerTokenNs.Ptr(i),
		MatchQuality:           q.MatchQuality.Get(i),
		ServerFinishReason:     q.ServerFinishReason.Get(i),
		Corrections:            q.Corrections.Get(i),
		InFlightAtStart:        q.InFlightAtStart.Ptr(i),
		EndBoundOffsetNs:       q.EndBoundOffsetNs.Ptr(i),
		EndBoundRule:           q.EndBoundRule.Get(i),
	}
}

// AppendEvents appends request i's messages to dst as event rows and
// returns the extended slice. Texts share the batch's memory.
func (b *Batch) AppendEvents(dst []Event, i int) []Event {
	lo, hi := b.Messages(i)
	m := &b.Msg
	key := b.Req.Key[i]
	for j := lo; j < hi; j++ {
		e := Event{
			RunID:      b.RunID,
			RequestKey: key,
			Index:      int32(j - lo),
			ReadIndex:  b.ReadOf(j, lo),
			OffsetNs:   m.OffsetNs[j],
			Kind:       b.KindName(m.Kind[j]),
			HasChoices: m.Choices.Get(j),
			Tokens:     m.Tokens.Ptr(j),
			Bytes:      b.BytesOf(j),
		}
		if s, ok := m.Text.Get(j); ok {
			e.Text = &s
		}
		if s, ok := m.ReasoningText.Get(j); ok {
			e.ReasoningText = &s
		}
		e.FinishReason, _ = m.FinishReason.Get(j)
		dst = append(dst, e)
	}
	return dst
}

// EachRow calls fn with every request of b as a row and its events, in
// order, stopping at the first error: for a sink that works row by row.
// The row and the events are reused between calls.
func (b *Batch) EachRow(fn func(r *Request, ev []Event) error) error {
	var ev []Event
	for i := range b.Len() {
		r := b.Row(i)
		ev = b.AppendEvents(ev[:0], i)
		evs := ev
		if len(evs) == 0 {
			evs = nil // a request without messages: nil, as Sink's rows had it
		}
		if err := fn(&r, evs); err != nil {
			return err
		}
	}
	return nil
}
