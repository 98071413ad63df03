# Fixture for adopter/rules/modern/fused_linear_cross_entropy.adopt.
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn import CrossEntropyLoss, MSELoss


class CausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.vocab_size = config.vocab_size
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.cls = LMHead(config)

    def forward(self, hidden_states, labels=None):
        # the logits are returned as well: found (reads: allowed), never rewritten
        # match: fused_linear_cross_entropy
        logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            loss_fct = CrossEntropyLoss()
            loss = loss_fct(logits.view(-1, self.config.vocab_size), labels.view(-1))
        return loss, logits


class Functional(CausalLM):
    def forward(self, hidden_states, labels):
        # match: fused_linear_cross_entropy
        lm_logits = self.lm_head(hidden_states)
        return F.cross_entropy(lm_logits.view(-1, self.config.vocab_size), labels.view(-1), ignore_index=-100)


class BuiltInPlace(CausalLM):
    def forward(self, hidden_states, labels):
        # match: fused_linear_cross_entropy
        logits = self.lm_head(hidden_states)
        loss_fct = nn.CrossEntropyLoss(ignore_index=-100)
        return loss_fct(logits.view(-1, self.config.vocab_size), labels.view(-1)), logits


class Seq2SeqLM(CausalLM):
    def forward(self, outputs, labels=None):
        # BART's: the head on the decoder's first output, the loss under a test of the labels
        # match: fused_linear_cross_entropy
        lm_logits = self.lm_head(outputs[0])
        masked_lm_loss = None
        if labels is not None:
            labels = labels.to(lm_logits.device)
            masked_lm_loss = torch.nn.functional.cross_entropy(
                lm_logits.view(-1, self.config.vocab_size), labels.view(-1), reduction="mean")
        return masked_lm_loss, lm_logits


class Classifier(CausalLM):
    def forward(self, pooled, labels):
        # a classifier flattened over `self.config.num_labels` (known limit: the classifier shape reads `self.num_labels`)
        # todo-match: fused_linear_cross_entropy
        logits = self.classifier(pooled)
        loss_fct = CrossEntropyLoss()
        return loss_fct(logits.view(-1, self.config.num_labels), labels.view(-1))


class Regression(CausalLM):
    def forward(self, hidden_states, labels):
        # no-match: fused_linear_cross_entropy
        logits = self.lm_head(hidden_states)
        loss_fct = MSELoss()
        return loss_fct(logits.view(-1, self.config.vocab_size), labels.view(-1))


class LMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size)

    def forward(self, x):
        return self.decoder(x)


class HeadModule(CausalLM):
    def forward(self, hidden_states, labels):
        # the head is a module of the file (BERT's `self.cls`), not a Linear: its forward is another root
        # no-match: fused_linear_cross_entropy
        scores = self.cls(hidden_states)
        loss_fct = CrossEntropyLoss()
        return loss_fct(scores.view(-1, self.config.vocab_size), labels.view(-1))


class OtherTensor(CausalLM):
    def forward(self, hidden_states, labels):
        # no-match: fused_linear_cross_entropy
        logits = self.lm_head(hidden_states)
        loss_fct = CrossEntropyLoss()
        return loss_fct(hidden_states.view(-1, self.config.vocab_size), labels.view(-1)), logits


class Shifted(CausalLM):
    def forward(self, hidden_states, labels):
        # `.contiguous()` between the head and the loss (Llama 4.x's shift): one more node (known limit)
        # todo-match: fused_linear_cross_entropy
        logits = self.lm_head(hidden_states)
        shift_logits = logits[..., :-1, :].contiguous()
        loss_fct = CrossEntropyLoss()
        return loss_fct(shift_logits.view(-1, self.config.vocab_size), labels[..., 1:].reshape(-1)), logits


class OwnVocabSize(CausalLM):
    def forward(self, hidden_states, labels):
        # the vocabulary as `self.vocab_size` (known limit: only `self.config.vocab_size` is read as one)
        # todo-match: fused_linear_cross_entropy
        logits = self.lm_head(hidden_states)
        return F.cross_entropy(logits.view(-1, self.vocab_size), labels.view(-1)), logits


# --- the further shapes (fused_linear_cross_entropy.*.adopt) ---------------------------------

class TokenClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_labels = config.num_labels
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.qa_outputs = nn.Linear(config.hidden_size, 1)

    def forward(self, sequence_output, labels):
        # match: fused_linear_cross_entropy
        logits = self.classifier(sequence_output)
        loss_fct = CrossEntropyLoss()
        return loss_fct(logits.view(-1, self.num_labels), labels.view(-1)), logits


class LastTokenClassifier(TokenClassifier):
    def forward(self, hidden_states, labels, last):
        # the loss reads one row per sequence, not the head's output
        # no-match: fused_linear_cross_entropy
        logits = self.classifier(hidden_states)
        pooled_logits = logits[torch.arange(hidden_states.shape[0]), last]
        loss_fct = CrossEntropyLoss()
        return loss_fct(pooled_logits.view(-1, self.num_labels), labels.view(-1)), pooled_logits


class MultipleChoice(TokenClassifier):
    def forward(self, pooled, labels, num_choices):
        # the class axis is the choices, not the head's one output feature
        # no-match: fused_linear_cross_entropy
        logits = self.qa_outputs(pooled)
        reshaped_logits = logits.view(-1, num_choices)
        return CrossEntropyLoss()(reshaped_logits, labels), reshaped_logits


class OwnSize(CausalLM):
    def forward(self, sequence_output, labels):
        # match: fused_linear_cross_entropy
        lm_logits = self.lm_head(sequence_output)
        loss_fct = CrossEntropyLoss(ignore_index=-100)
        return loss_fct(lm_logits.view(-1, lm_logits.size(-1)), labels.view(-1)), lm_logits


class BiasAdded(CausalLM):
    def __init__(self, config):
        super().__init__(config)
        self.register_buffer("final_logits_bias", torch.zeros((1, config.vocab_size)))

    def forward(self, hidden_states, labels):
        # match: fused_linear_cross_entropy
        lm_logits = self.lm_head(hidden_states)
        lm_logits = lm_logits + self.final_logits_bias.to(lm_logits.device)
        loss_fct = CrossEntropyLoss()
        return loss_fct(lm_logits.view(-1, self.config.vocab_size), labels.view(-1)), lm_logits
