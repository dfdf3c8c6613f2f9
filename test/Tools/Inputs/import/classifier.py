"""An MLP classifier with its own loss and a frozen input projection
(zero_model), and an MLP whose output layer is tied to its input layer (one
parameter under two names) with a frozen bias (tied)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, features=8, hidden=16, classes=8):
        super().__init__()
        self.embed = nn.Linear(features, hidden, bias=False)
        self.embed.weight.requires_grad_(False)          # frozen
        self.hidden = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, classes, bias=False)

    def forward(self, x):
        h = self.embed(x)
        h = F.gelu(self.hidden(h), approximate="tanh")
        return self.head(self.norm(h))


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 8, bias=False)
        self.mid = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8, bias=False)
        self.out.weight = self.inp.weight                # tied
        self.mid.bias.requires_grad_(False)              # frozen

    def forward(self, x):
        return self.out(torch.relu(self.mid(self.inp(x))))


def loss(logits, target):
    """Cross-entropy minus half the mean squared logit (a custom loss)."""
    return F.cross_entropy(logits, target) + 0.5 * F.mse_loss(logits, torch.zeros_like(logits))


def zero_model():
    torch.manual_seed(0)
    return Classifier(), (torch.randn(16, 8), torch.randint(0, 8, (16,))), loss


def tied():
    torch.manual_seed(0)
    return Tied(), (torch.randn(16, 8), torch.randint(0, 8, (16,))), F.cross_entropy


class LogProbs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=-1)


def nll():
    """nll_loss of log_softmax: the cross-entropy in two steps."""
    torch.manual_seed(0)
    return LogProbs(), (torch.randn(16, 8), torch.randint(0, 5, (16,))), F.nll_loss
