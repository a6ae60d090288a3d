"""Generate the benchmark inputs: EEE aggregate files and instance-level JSONL, deterministically.

Records look like real Every Eval Ever data: aggregate files of about 6 KB (several results,
Hugging Face and URL sources, uncertainty, generation settings, LLM judges) and instance-level
lines of about 2.6 KB, a mix of single-turn answers, multi-turn conversations and agentic runs
with tool calls. The same seed always gives the same bytes.

    python benchmarks/generate.py OUT_DIR [--aggregates N] [--lines N]
"""

from __future__ import annotations

import argparse
import os
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

SEED = 20250101
POOL = 4096
"""Distinct instance records generated; longer files reuse them with new ids."""

_VOCABULARY = (
    "the model answer question reasoning step first then because value total number each result "
    "check final output tool call file function test pass error return list string count sum "
    "compute explain given problem example input expected correct wrong score metric judge prompt "
    "context document paragraph summary evidence source claim fact true false option choice "
    "between after before while until during within across against table column row query "
    "database record field schema version update change fix issue patch branch commit review "
    "merge build deploy server request response latency token cache memory thread process "
    "student teacher train station city river mountain apple orange price market week month year "
    "doctor patient dose symptom treatment law court contract clause party payment invoice"
)
_WORDS = tuple(_VOCABULARY.split())
_DEVELOPERS = {
    "meta-llama": ("Llama-3.1-8B-Instruct", "Llama-3.1-70B-Instruct", "Llama-3.2-3B-Instruct"),
    "Qwen": ("Qwen2.5-7B-Instruct", "Qwen2.5-72B-Instruct", "Qwen2.5-Coder-32B-Instruct"),
    "mistralai": ("Mistral-7B-Instruct-v0.3", "Mixtral-8x7B-Instruct-v0.1"),
    "google": ("gemma-2-9b-it", "gemma-2-27b-it"),
    "openai": ("gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18"),
    "anthropic": ("claude-3-5-sonnet-20241022", "claude-3-5-haiku-20241022"),
}
_BENCHMARKS = (
    ("gsm8k", "openai/gsm8k", "test", 1319),
    ("mmlu", "cais/mmlu", "test", 14042),
    ("hellaswag", "Rowan/hellaswag", "validation", 10042),
    ("arc_challenge", "allenai/ai2_arc", "test", 1172),
    ("truthfulqa_mc2", "truthfulqa/truthful_qa", "validation", 817),
    ("mt_bench", "lmsys/mt_bench_human_judgments", "human", 80),
    ("swe_bench_lite", "princeton-nlp/SWE-bench_Lite", "test", 300),
)
_TOOLS = ("bash", "python", "read_file", "write_file", "search", "browser")


def _text(rng: random.Random, words: int) -> str:
    """Return `words` words of sentence-like text."""
    out: list[str] = []
    while len(out) < words:
        sentence = [rng.choice(_WORDS) for _ in range(rng.randint(6, 16))]
        sentence[0] = sentence[0].capitalize()
        out += sentence
        out[-1] += rng.choice((".", ".", ".", "?", ","))
    return " ".join(out[:words])


def _model(rng: random.Random) -> tuple[str, str]:
    developer = rng.choice(sorted(_DEVELOPERS))
    return developer, f"{developer}/{rng.choice(_DEVELOPERS[developer])}"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _uncertainty(rng: random.Random, score: float, n: int) -> dict[str, Any]:
    stderr = round(rng.uniform(0.004, 0.03), 5)
    return {
        "standard_error": {"value": stderr, "method": "analytic"},
        "confidence_interval": {
            "lower": round(max(0.0, score - 1.96 * stderr), 4),
            "upper": round(min(1.0, score + 1.96 * stderr), 4),
            "confidence_level": 0.95,
            "method": "normal approximation",
        },
        "num_samples": n,
    }


def _metric(rng: random.Random, judged: bool) -> dict[str, Any]:
    metric: dict[str, Any] = {
        "evaluation_description": _text(rng, rng.randint(8, 20)),
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 1,
    }
    if judged:
        _, judge = _model(rng)
        metric["llm_scoring"] = {
            "judges": [
                {
                    "model_info": {"name": judge.split("/")[1], "id": judge},
                    "temperature": 0.0,
                    "weight": 1.0,
                }
            ],
            "input_prompt": _text(rng, rng.randint(20, 40)),
            "aggregation_method": "average",
        }
    return metric


def _generation_args(rng: random.Random, name: str) -> dict[str, Any]:
    return {
        "temperature": rng.choice((0.0, 0.2, 0.7)),
        "top_p": rng.choice((None, 0.95, 1.0)),
        "max_tokens": rng.choice((256, 512, 1024, 2048)),
        "execution_command": f"lm_eval --model vllm --tasks {name} --num_fewshot "
        f"{rng.randint(0, 8)} --batch_size auto",
        "prompt_template": _text(rng, rng.randint(10, 25)),
    }


def aggregate(rng: random.Random, version: str) -> dict[str, Any]:
    """Return one aggregate record at `version` (`0.1.0` or `0.2.0`)."""
    developer, model_id = _model(rng)
    bench, repo, split, size = rng.choice(_BENCHMARKS)
    stamp = str(1717200000 + rng.randint(0, 30_000_000))
    url_source = rng.random() < 0.3
    urls = [
        f"https://leaderboard.example.org/{bench}/{model_id}/results_{i}.json"
        for i in range(rng.randint(1, 3))
    ]
    hf: dict[str, Any] = {
        "dataset_name": bench,
        "hf_repo": repo,
        "hf_split": split,
        "samples_number": size,
        "sample_ids": [f"{bench}_{i:05d}" for i in rng.sample(range(size), 3)],
    }
    record: dict[str, Any] = {
        "schema_version": version,
        "evaluation_id": f"{bench}/{model_id}/{stamp}",
        "retrieved_timestamp": stamp,
    }
    if version == "0.1.0":
        record["source_data"] = urls if url_source else hf
    record["source_metadata"] = {
        "source_name": f"{bench} run with lm-evaluation-harness",
        "source_type": "evaluation_run",
        "source_organization_name": rng.choice(("Northwind AI Lab", "Open Eval Collective")),
        "source_organization_url": "https://evals.example.org",
        "evaluator_relationship": rng.choice(("third_party", "first_party", "collaborative")),
    }
    engine: Any = {"name": "vLLM", "version": "0.6.3"} if version != "0.1.0" else "vLLM"
    record["model_info"] = {
        "name": model_id.split("/")[1],
        "id": model_id,
        "developer": developer,
        "inference_platform": "local",
        "inference_engine": engine,
        "additional_details": {
            "precision": rng.choice(("bfloat16", "float16")),
            "num_gpus": rng.choice((1, 2, 4, 8)),
            "notes": _text(rng, rng.randint(10, 25)),
        },
    }
    results = []
    for index in range(rng.randint(2, 4) if version != "0.1.0" else rng.randint(3, 6)):
        name = f"{bench}_{rng.choice(('strict', 'flexible', 'cot', 'zero_shot', 'judged'))}_{index}"
        score = round(rng.uniform(0.2, 0.95), 4)
        result: dict[str, Any] = {"evaluation_name": name}
        if version != "0.1.0":
            result["source_data"] = (
                {"source_type": "url", "url": urls, "dataset_name": bench}
                if url_source
                else {"source_type": "hf_dataset", **hf}
            )
        result["evaluation_timestamp"] = "2024-11-13T22:41:07Z"
        result["metric_config"] = _metric(rng, judged=rng.random() < 0.25)
        if version == "0.1.0":
            result["metric_config"].pop("llm_scoring", None)
        result["score_details"] = {
            "score": score,
            "details": {"filter": rng.choice(("strict-match", "flexible-extract")), "n_shot": 5},
        }
        if version != "0.1.0":
            result["score_details"]["uncertainty"] = _uncertainty(rng, score, size)
        result["generation_config"] = {"generation_args": _generation_args(rng, bench)}
        if version == "0.1.0" and rng.random() < 0.3:
            result["detailed_evaluation_results_url"] = (
                f"https://leaderboard.example.org/{bench}/{model_id}/samples_{index}.jsonl"
            )
        results.append(result)
    record["evaluation_results"] = results
    if version == "0.1.0":
        samples = f"data/{bench}/{model_id}/{_uuid(rng)}_samples.jsonl"
        record["detailed_evaluation_results_per_samples"] = samples
    # Later aggregates name no samples file: the datastore's companion check would want it
    # beside them, and these inputs hold aggregates alone.
    return record


def _attribution(turn: int, source: str, value: str, terminal: bool) -> dict[str, Any]:
    return {
        "turn_idx": turn,
        "source": source,
        "extracted_value": value,
        "extraction_method": "regex" if terminal else "custom",
        "is_terminal": terminal,
    }


def instance(rng: random.Random, index: int) -> dict[str, Any]:
    """Return one instance-level record at 0.2.0: single-turn, multi-turn or agentic."""
    _, model_id = _model(rng)
    bench = rng.choice(_BENCHMARKS)[0]
    kind = rng.choices(("single_turn", "multi_turn", "agentic"), (5, 3, 2))[0]
    question = _text(rng, rng.randint(30, 60))
    answer = str(rng.randint(1, 999))
    record: dict[str, Any] = {
        "schema_version": "0.2.0",
        "evaluation_id": f"{bench}/{model_id}/1731542400",
        "model_id": model_id,
        "evaluation_name": bench,
        "sample_id": f"{bench}_{index:07d}",
        "sample_hash": f"{rng.getrandbits(256):064x}",
        "interaction_type": kind,
        "input": {
            "raw": question,
            "formatted": f"<|user|>\n{question}\n<|assistant|>\n",
            "reference": answer,
        },
    }
    if kind == "single_turn":
        reasoning = _text(rng, rng.randint(80, 130))
        record["output"] = {
            "raw": f"{reasoning} The answer is {answer}.",
            "reasoning_trace": _text(rng, rng.randint(20, 50)),
        }
        record["answer_attribution"] = [_attribution(0, "output.raw", answer, True)]
        turns, calls = 1, 0
    else:
        messages: list[dict[str, Any]] = [
            {"turn_idx": 0, "role": "system", "content": _text(rng, 18)},
            {"turn_idx": 1, "role": "user", "content": question},
        ]
        calls = 0
        rounds = rng.randint(1, 3) if kind == "agentic" else rng.randint(1, 2)
        for _ in range(rounds):
            turn = len(messages)
            if kind == "agentic":
                call_id = f"call_{rng.getrandbits(40):010x}"
                tool = rng.choice(_TOOLS)
                messages.append(
                    {
                        "turn_idx": turn,
                        "role": "assistant",
                        "content": None,
                        "reasoning_trace": _text(rng, rng.randint(8, 20)),
                        "tool_calls": [
                            {"id": call_id, "name": tool, "arguments": {"cmd": _text(rng, 8)}}
                        ],
                    }
                )
                messages.append(
                    {
                        "turn_idx": turn + 1,
                        "role": "tool",
                        "content": _text(rng, rng.randint(10, 25)),
                        "tool_call_id": call_id,
                    }
                )
                calls += 1
            else:
                messages.append({"turn_idx": turn, "role": "assistant", "content": _text(rng, 30)})
                messages.append({"turn_idx": turn + 1, "role": "user", "content": _text(rng, 15)})
        last = len(messages)
        messages.append(
            {"turn_idx": last, "role": "assistant", "content": f"The answer is {answer}."}
        )
        record["output"] = None
        record["interactions"] = messages
        record["answer_attribution"] = [
            _attribution(last, f"interactions[{last}].content", answer, True)
        ]
        turns = len(messages)
    correct = rng.random() < 0.7
    record["evaluation"] = {
        "score": 1.0 if correct else 0.0,
        "is_correct": correct,
        "num_turns": turns,
        "tool_calls_count": calls,
    }
    prompt_tokens = rng.randint(200, 4000)
    output_tokens = rng.randint(20, 900)
    record["token_usage"] = {
        "input_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "total_tokens": prompt_tokens + output_tokens,
        "input_tokens_cache_read": rng.choice((0, 128, None)),
        "reasoning_tokens": None,
    }
    record["performance"] = {
        "latency_ms": round(rng.uniform(200, 60000), 1),
        "time_to_first_token_ms": round(rng.uniform(20, 900), 1),
        "generation_time_ms": round(rng.uniform(100, 50000), 1),
    }
    record["error"] = None
    record["metadata"] = {"subject": rng.choice(_WORDS), "difficulty": rng.choice(("easy", "hard"))}
    return record


def _spoil_aggregate(record: dict[str, Any]) -> None:
    """Make an aggregate record invalid the way real ones are: a score written as text."""
    score = record["evaluation_results"][0]["score_details"]
    score["score"] = f"{score['score'] * 100:.1f}%"


def _spoil_instance(record: dict[str, Any]) -> dict[str, Any]:
    """Return an invalid copy of an instance record: an interaction type no version knows."""
    return {**record, "interaction_type": "chat"}


def write_aggregates(
    directory: Path, count: int, version: str, seed: int = SEED, invalid_every: int = 0
) -> int:
    """Write `count` aggregate files under `directory` (data/<bench>/<model>/<uuid>.json), in
    Every Eval Ever's datastore layout.

    With `invalid_every`, every such file (the first one included) holds an invalid record.
    """
    rng = random.Random(f"{seed}-aggregate-{version}")
    total = 0
    for index in range(count):
        record = aggregate(rng, version)
        if invalid_every and index % invalid_every == invalid_every // 2:
            _spoil_aggregate(record)
        bench = record["evaluation_id"].split("/")[0]
        path = directory / "data" / bench / record["model_info"]["id"] / f"{_uuid(rng)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n"
        path.write_bytes(data)
        total += len(data)
    return total


def instance_lines(count: int, seed: int = SEED, invalid_every: int = 0) -> Iterator[bytes]:
    """Yield `count` JSONL lines of instance-level records (a pool reused with new ids).

    With `invalid_every`, every such line holds an invalid record, and one line in the middle
    is cut short (not JSON).
    """
    rng = random.Random(f"{seed}-instance")
    pool = [instance(rng, i) for i in range(min(count, POOL))]
    for index in range(count):
        record = pool[index % len(pool)]
        if index >= len(pool):
            record = {**record, "sample_id": f"{record['evaluation_name']}_{index:07d}"}
        if invalid_every and index % invalid_every == invalid_every // 2:
            record = _spoil_instance(record)
        line = orjson.dumps(record)
        if invalid_every and index == count // 2 + 1:
            line = line[: len(line) // 2]
        yield line + b"\n"


def write_jsonl(path: Path, count: int, seed: int = SEED, invalid_every: int = 0) -> int:
    """Write `count` instance-level lines to `path`; return the byte size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    total = 0
    with open(path, "wb", buffering=1 << 20) as stream:
        for line in instance_lines(count, seed, invalid_every):
            stream.write(line)
            total += len(line)
    return total


def main() -> None:
    """Write the inputs given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--aggregates", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=10000)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    size = write_aggregates(args.out / "aggregate-0.2.0", args.aggregates, "0.2.0")
    size += write_aggregates(args.out / "aggregate-0.1.0", args.aggregates, "0.1.0")
    size += write_jsonl(args.out / "instance-0.2.0.jsonl", args.lines)
    print(f"wrote {size / 1e6:.1f} MB under {args.out}")


if __name__ == "__main__":
    main()
