# An OpenCompass config: one tiny local dataset in two prompt templates, one fixed-answer
# model. Paths are relative: run from a folder holding tiny.jsonl (make_fixture.sh does).
from opencompass.datasets import JsonlDataset
from opencompass.openicl.icl_evaluator import EMEvaluator
from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import ZeroRetriever

reader_cfg = dict(input_columns=["question"], output_column="answer")
datasets = [
    dict(
        abbr=f"tiny_{name}",
        type=JsonlDataset,
        path="tiny.jsonl",
        reader_cfg=reader_cfg,
        infer_cfg=dict(
            prompt_template=dict(type=PromptTemplate, template=template),
            retriever=dict(type=ZeroRetriever),
            inferencer=dict(type=GenInferencer, max_out_len=8),
        ),
        eval_cfg=dict(evaluator=dict(type=EMEvaluator)),
    )
    for name, template in (("plain", "{question}"), ("qa", "Question: {question}\nAnswer:"))
]
models = [
    dict(
        type="tiny_oc_model.FixedAnswers",
        abbr="fixed-answers",
        path="fixed-answers",
        max_seq_len=256,
        max_out_len=8,
        batch_size=8,
        run_cfg=dict(num_gpus=0),
    )
]
