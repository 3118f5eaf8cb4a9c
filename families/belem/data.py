"""Belem et al.'s published stimuli, the reference data ``manage.py fetch_data belem-stimuli`` fetches (the family
contributes it to config.registry, kind ``datasets``)."""
from __future__ import annotations

from analysis.reference_data import DataFile, Dataset

BELEM_COMMIT = "36c371b"
BELEM_RAW = f"https://github.com/UCIDataLab/llm-uncertainty-perceptions/raw/{BELEM_COMMIT}/data"

STIMULI = Dataset(
    name="belem-stimuli",
    folder="belem2024-stimuli",
    title="Belem et al.'s stimuli: 60 non-verifiable and 60 verifiable statements × (14 expressions + control)",
    source=f"https://github.com/UCIDataLab/llm-uncertainty-perceptions/tree/{BELEM_COMMIT}/data",
    licence="no licence is stated at the source; the stimuli are published with the paper for research use. "
            "Cite the paper, and ask the authors before redistributing the files.",
    citation="Belém, C. G., Kelly, M., Steyvers, M., Singh, S., & Smyth, P. (2024). Perceptions of Linguistic "
             "Uncertainty by Language Models and Humans. EMNLP 2024, 8467–8502. "
             "https://doi.org/10.18653/v1/2024.emnlp-main.483",
    files=(DataFile("non-verifiable.csv", f"{BELEM_RAW}/non-verifiable.csv",
                    "6e7715826221ed8b6b4b23bab7b1fce8f3e65525bf88cbe4708bcbf54769b55b"),
           DataFile("verifiable.csv", f"{BELEM_RAW}/verifiable.csv",
                    "e93d7f6a42e7835b949f376a9b0edccd86db70172618c7cf50d45d35d456d923")),
    next_step=".venv/bin/python manage.py import_items STUDY {path}",
)
