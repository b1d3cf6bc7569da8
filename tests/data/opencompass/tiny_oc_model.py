"""A model for OpenCompass that answers from a fixed table (no weights, no network)."""

from opencompass.models.base import BaseModel
from opencompass.registry import MODELS

ANSWERS = {
    "What is 1 + 2?": "3",
    "What is 3 + 4?": "7",
    "What is 5 + 1?": "6",
    "What is 2 + 2?": "5",
    "What is 7 + 3?": "10",
    "What is 4 + 4?": "9",
}


@MODELS.register_module()
class FixedAnswers(BaseModel):
    """Answers the question a prompt ends with from ANSWERS; prompts with 'Answer:' get '0'."""

    def generate(self, inputs, max_out_len):
        answers = []
        for prompt in inputs:
            text = str(prompt)
            question = next((q for q in ANSWERS if q in text), None)
            if question is None or (text.rstrip().endswith("Answer:") and "4" in question):
                answers.append("0")
            else:
                answers.append(ANSWERS[question])
        return answers

    def get_token_len(self, prompt):
        return len(str(prompt).split())

    def get_ppl(self, inputs, mask_length=None):
        raise NotImplementedError

    def encode(self, prompt):
        raise NotImplementedError

    def decode(self, tokens):
        raise NotImplementedError
