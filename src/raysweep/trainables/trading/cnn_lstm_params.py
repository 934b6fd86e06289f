"""The ``cnn_lstm`` entry model's parameters (``cnn_lstm.<name>`` in sweep.json's ``space``).

Import-light (no torch): config validation reads them, as a trial does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from raysweep.errors import ConfigError
from raysweep.trainables.params.names import did_you_mean, nearest
from raysweep.trainables.trading.params import float_value, int_value

CNN_LSTM = "cnn_lstm"
_WHERE = f"space.{CNN_LSTM}"


@dataclass(frozen=True)
class CnnLstmParams:
    """A causal 1-D convolution over each row's window of feature bars, an LSTM, a linear head.

    ``seq_len`` bars of the row's own symbol (itself and the ones before it) make a
    window; ``epochs`` passes over a fold's training rows in shuffled batches.
    """

    seq_len: int = 32
    conv_channels: int = 32
    kernel_size: int = 3
    hidden_size: int = 64
    num_layers: int = 1
    dropout: float = 0.1
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    epochs: int = 5
    batch_size: int = 256

    @staticmethod
    def from_config(own: Mapping[str, Any]) -> CnnLstmParams:
        """The parameters of ``own`` (``cnn_lstm.`` removed); ConfigError naming a bad one."""
        valid = [f.name for f in fields(CnnLstmParams)]
        for key in own:
            if key not in valid:
                raise ConfigError(
                    f"{_WHERE}.{key}: unknown parameter{did_you_mean(nearest(key, valid))}; "
                    f"valid: {', '.join(valid)}"
                )
        d = CnnLstmParams()
        ints = {
            name: int_value(own, name, getattr(d, name), _WHERE, low)
            for name, low in (("seq_len", 2), ("conv_channels", 1), ("kernel_size", 1),
                              ("hidden_size", 1), ("num_layers", 1), ("epochs", 1),
                              ("batch_size", 1))
        }  # fmt: skip
        if ints["kernel_size"] > ints["seq_len"]:
            raise ConfigError(
                f"{_WHERE}.kernel_size: must be <= seq_len (got {ints['kernel_size']} > "
                f"{ints['seq_len']})"
            )
        dropout = float_value(own, "dropout", d.dropout, _WHERE, 0.0, 0.9)
        lr = float_value(own, "learning_rate", d.learning_rate, _WHERE, 0.0, 1.0, low_open=True)
        decay = float_value(own, "weight_decay", d.weight_decay, _WHERE, 0.0, 1.0)
        return CnnLstmParams(dropout=dropout, learning_rate=lr, weight_decay=decay, **ints)
