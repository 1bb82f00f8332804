"""Run under torchrun by test_distributed.py: a small model trained for some updates, each process on its share
of the batches; each process then saves its weights as rank{R}.pt in the directory given. `setup` is shared with
the test, which trains the same model in one process for comparison."""

import sys
from pathlib import Path

import torch

from annotated_transformer.batches import batch_loader, epoch_batches
from annotated_transformer.distributed import distributed
from annotated_transformer.model import make_model
from annotated_transformer.trainer import Trainer
from annotated_transformer.training import BOS, EOS, PAD, LabelSmoothing

VOCAB, STEPS = 20, 20  # 20 updates of 2 batches: past the end of the first epoch (about 30 batches)


def setup():
    "The model, optimizer, scheduler and batch loader, the same in every process and in the test."
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(3, 20, (400,), generator=g).tolist()
    src = [torch.randint(4, VOCAB, (n,), generator=g).tolist() + [EOS] for n in lengths]
    tgt = [[BOS, *reversed(s[:-1]), EOS] for s in src]
    torch.manual_seed(0)
    model = make_model(VOCAB, VOCAB, N=1, d_model=32, d_ff=64, h=4, dropout=0.0)
    # Plain SGD: Adam would turn the rounding noise of gradients that are zero in exact arithmetic (the key
    # projection's bias, to which softmax is blind) into full-sized steps, and the comparison into noise.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    return model, optimizer, scheduler, batch_loader(src, tgt, max_tokens=200, shuffle=True, seed=0)


def run(model, optimizer, scheduler, loader, **kwargs):
    "Train for `STEPS` updates; `kwargs` go to the `Trainer` (`processes`, `accum_iter`)."
    criterion = LabelSmoothing(VOCAB, PAD, 0.1)
    trainer = Trainer(model, epoch_batches(loader), criterion, optimizer, scheduler, progress=False, **kwargs)
    return trainer.fit(steps=STEPS)


if __name__ == "__main__":
    with distributed() as processes:
        model, optimizer, scheduler, loader = setup()
        run(model, optimizer, scheduler, processes.shard(loader), processes=processes)
        torch.save(model.state_dict(), Path(sys.argv[1]) / f"rank{processes.rank}.pt")
