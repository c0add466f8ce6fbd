package ingest

import "testing"

func TestDefaultLabel(t *testing.T) {
	cases := map[string]string{
		"runs/c1/profile_export.json":                                         "c1",
		"runs/c1/profile_export_genai_perf.json":                              "c1",
		"res/meta-llama-Llama-2-7b-chat-hf_550_150_individual_responses.json": "meta-llama-Llama-2-7b-chat-hf_550_150",
		"res/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json":              "meta-llama-Llama-2-7b-chat-hf_550_150",
		"leaderboard/anyscale/individual_responses.json":                      "anyscale",
		"exports/sweep_c8.json":                                               "sweep_c8",
	}
	for in, want := range cases {
		if got := DefaultLabel(in); got != want {
			t.Errorf("DefaultLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunLabel(t *testing.T) {
	if RunLabel("x", 0) != "x" || RunLabel("x", 1) != "x#2" {
		t.Fatal(RunLabel("x", 1))
	}
}

func TestRedactJSON(t *testing.T) {
	in := `{"header":["Authorization:Bearer sk-or-v1-abcdef0123456789","X-Title:ok"],"api_key":"k","tokenizer":"gpt2","u":"https://h/api","note":"token sk-abcdefgh12345678 here"}`
	out, paths := RedactJSON([]byte(in), "cfg")
	want := `{"api_key":"REDACTED","header":["Authorization:REDACTED","X-Title:ok"],"note":"token REDACTED here","tokenizer":"gpt2","u":"https://h/api"}`
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if len(paths) != 3 || paths[0] != "cfg.api_key" || paths[1] != "cfg.header[0]" || paths[2] != "cfg.note" {
		t.Fatalf("paths %v", paths)
	}
}
