"""A user's own small language model (not a Hugging Face one): token and
position embeddings, one pre-LayerNorm MLP block, an LM head tied to the
token table; the loss is a separate function."""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, SEQ, BATCH = 256, 32, 16, 4


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(0.02 * torch.randn(SEQ, DIM))
        self.ln = nn.LayerNorm(DIM)
        self.fc = nn.Linear(DIM, 4 * DIM)
        self.proj = nn.Linear(4 * DIM, DIM)
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.tok.weight               # tied
        nn.init.normal_(self.tok.weight, std=0.02)

    def forward(self, ids):
        x = self.tok(ids) + self.pos
        x = x + self.proj(F.gelu(self.fc(self.ln(x)), approximate="tanh"))
        return self.head(self.ln_f(x))


def next_token_loss(logits, targets):
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def zero_model():
    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return TinyLM(), (ids, torch.roll(ids, -1, 1)), next_token_loss
