"""``--backend vllm``: offline ``vllm.LLM`` on the local GPU(s) (``pip install 'culturebench[vllm]'``, imported only
when used)."""

from __future__ import annotations

from collections.abc import Sequence

from culturebench.errors import InputError
from culturebench.evaluate.backends import BackendError, BackendStats, ChatRequest, ChatResponse, OnResponse


class VLLMBackend:
    """Offline ``vllm.LLM`` on the local GPU(s), batched ``LLM.chat``.

    Requests that share messages and sampling (repeated samples) become one conversation with
    ``SamplingParams(n=K)``; output ``k`` goes to the ``k``-th of them in ``sample_index`` order (greedy requests
    are generated once and copied). ``batch_size`` conversations go to ``LLM.chat`` at a time, so responses reach
    ``on_response`` (and the cache) batch by batch.
    """

    name = "vllm"

    def __init__(self, model: str, tensor_parallel_size: int = 1, dtype: str = "auto",
                 max_model_len: int | None = None, gpu_memory_utilization: float = 0.9, seed: int = 0, *,
                 batch_size: int = 1024) -> None:
        try:
            import vllm
        except ImportError:
            raise InputError("vLLM is not installed: pip install 'culturebench[vllm]'") from None
        try:
            import torch

            has_gpu = bool(torch.cuda.is_available())
        except ImportError:
            has_gpu = False
        if not has_gpu:
            raise InputError("the vllm backend needs a CUDA GPU and none is available "
                             "(use the openai backend against a server instead)")
        self.model = model
        self.dtype = dtype
        self.seed = seed
        self.batch_size = batch_size
        self.stats = BackendStats()
        self._vllm = vllm
        kwargs = {"model": model, "tensor_parallel_size": tensor_parallel_size, "dtype": dtype,
                  "gpu_memory_utilization": gpu_memory_utilization, "seed": seed}
        if max_model_len is not None:
            kwargs["max_model_len"] = max_model_len
        self.llm = vllm.LLM(**kwargs)

    def cache_params(self) -> dict:
        return {"backend": "vllm", "model": self.model, "dtype": self.dtype, "seed": self.seed}

    def generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        groups: dict[tuple, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault((request.messages, request.sampling), []).append(index)
        items = [(key, sorted(indices, key=lambda i: requests[i].sample_index)) for key, indices in groups.items()]
        for start in range(0, len(items), self.batch_size):
            batch = items[start:start + self.batch_size]
            conversations, params = [], []
            for (messages, sampling), indices in batch:
                conversations.append([{"role": role, "content": content} for role, content in messages])
                n = 1 if sampling.temperature == 0 else len(indices)
                stop = {"stop": list(sampling.stop)} if sampling.stop else {}
                params.append(self._vllm.SamplingParams(n=n, temperature=sampling.temperature,
                                                        max_tokens=sampling.max_tokens, top_p=sampling.top_p,
                                                        seed=sampling.seed, **stop))
            outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=False)
            if len(outputs) != len(batch):
                raise BackendError(f"vllm returned {len(outputs)} outputs for {len(batch)} conversations")
            for (_, indices), output in zip(batch, outputs):
                prompt_tokens = len(getattr(output, "prompt_token_ids", None) or [])
                for k, index in enumerate(indices):
                    sample = output.outputs[k if len(output.outputs) > 1 else 0]
                    response = ChatResponse(text=sample.text, prompt_tokens=prompt_tokens,
                                            completion_tokens=len(sample.token_ids or []),
                                            finish_reason=sample.finish_reason)
                    self.stats.requests += 1
                    self.stats.prompt_tokens += response.prompt_tokens
                    self.stats.completion_tokens += response.completion_tokens
                    on_response(index, response)
